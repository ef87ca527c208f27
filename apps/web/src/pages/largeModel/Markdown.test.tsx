import { describe, expect, it } from 'vitest';
import { render, screen } from '@testing-library/react';
import { Markdown } from './Markdown.tsx';

describe('Markdown', () => {
  it('renders GFM, highlights code with a copy button, and keeps links safe', () => {
    const text = '# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nconst x = 1;\n```\n\n[ok](https://example.com) [bad](javascript:alert(1)) <script>alert(1)</script>';
    const { container } = render(<Markdown text={text} />);
    expect(container.querySelector('table td')?.textContent).toBe('1');
    const block = screen.getByTestId('code-block');
    expect(block.querySelector('code.hljs')?.textContent).toBe('const x = 1;\n');
    expect(block.querySelector('.hljs-keyword')?.textContent).toBe('const');
    expect(screen.getByTestId('code-copy')).toBeTruthy();
    const links = [...container.querySelectorAll('a')];
    expect(links[0]?.getAttribute('href')).toBe('https://example.com');
    expect(links[0]?.getAttribute('rel')).toContain('noopener');
    expect(links[0]?.getAttribute('target')).toBe('_blank');
    expect(links[1]?.getAttribute('href') ?? '').not.toContain('javascript');
    expect(container.querySelector('script')).toBeNull();
  });
});
