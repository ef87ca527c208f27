/**
 * Help centre. Article bodies are a small markdown subset rendered by HelpPage: blocks are
 * separated by a blank line; `## ` heading, `### ` question, `- ` bullets, `1. ` steps,
 * `$ ` command lines, `> ` tip, and `inline code` in backticks.
 */
export default {
  title: '帮助中心',
  subtitle: '从注册到租用实例、连接与计费，这里有您需要的答案',
  searchPlaceholder: '搜索帮助文章，如 “SSH”、“计费”、“释放”',
  categoriesTitle: '文档目录',
  resultCount: '找到 {count} 篇与 “{q}” 相关的文章',
  noResults: '没有找到与 “{q}” 相关的文章',
  noResultsHint: '换个关键词试试，或者直接联系我们',
  clearSearch: '清除搜索',
  updated: '适用于当前版本控制台',
  prev: '上一篇：{title}',
  next: '下一篇：{title}',
  backToResults: '返回搜索结果',
  stillNeedHelp: '没有找到答案？',
  stillNeedHelpDesc: '客服电话 {phone}，或提交预约咨询，我们会尽快联系您。',
  contactUs: '联系我们',
} as const;
