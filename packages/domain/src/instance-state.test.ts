import { describe, expect, it } from 'vitest';
import { allowedActions, canDo, canTransition, refusal } from './instance-state.ts';

describe('instance state machine', () => {
  it('allows power actions only where they make sense', () => {
    expect(canDo('running', 'power_off')).toBe(true);
    expect(canDo('stopped', 'power_off')).toBe(false);
    expect(canDo('stopped', 'power_on')).toBe(true);
    expect(canDo('running', 'init')).toBe(false);
    expect(canDo('stopped', 'change_image')).toBe(true);
    expect(canDo('failed', 'release')).toBe(true);
    expect(allowedActions('released')).toEqual([]);
    expect(allowedActions('creating')).not.toContain('release');
  });

  it('names the state in Chinese when refusing', () => {
    expect(refusal('stopped', 'power_off')).toBe('实例当前状态为「已关机」，无法关机');
    expect(refusal('running', 'init')).toBe('实例当前状态为「运行中」，无法重置系统');
  });

  it('follows creating → running ↔ stopped → releasing → released', () => {
    expect(canTransition('creating', 'running')).toBe(true);
    expect(canTransition('running', 'stopping')).toBe(true);
    expect(canTransition('stopping', 'stopped')).toBe(true);
    expect(canTransition('stopped', 'starting')).toBe(true);
    expect(canTransition('starting', 'running')).toBe(true);
    expect(canTransition('stopped', 'releasing')).toBe(true);
    expect(canTransition('releasing', 'released')).toBe(true);
    expect(canTransition('released', 'running')).toBe(false);
    expect(canTransition('stopped', 'running')).toBe(false);
  });
});
