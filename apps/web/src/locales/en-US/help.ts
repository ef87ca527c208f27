import type { Dict } from '../types.ts';
import type zh from '../zh-CN/help.ts';

/** Shorter English versions of the help articles; same ids and order as zh-CN. */
export default {
  title: 'Help centre',
  subtitle: 'Signing up, renting, connecting and billing, explained',
  searchPlaceholder: 'Search articles, e.g. “SSH”, “billing”, “release”',
  categoriesTitle: 'Contents',
  resultCount: '{count} articles match “{q}”',
  noResults: 'No article matches “{q}”',
  noResultsHint: 'Try another word, or contact us',
  clearSearch: 'Clear search',
  updated: 'Applies to the current console',
  prev: 'Previous: {title}',
  next: 'Next: {title}',
  backToResults: 'Back to results',
  stillNeedHelp: 'Still need help?',
  stillNeedHelpDesc: 'Call {phone}, or leave a request and we will get back to you.',
  contactUs: 'Contact us',
} satisfies Dict<typeof zh>;
