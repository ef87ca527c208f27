import type { Dict } from '../types.ts';
import type zh from '../zh-CN/common.ts';

export default {
  appLoading: 'Loading, please wait',
  ok: 'OK',
  cancel: 'Cancel',
  confirm: 'Confirm',
  save: 'Save',
  submit: 'Submit',
  back: 'Back',
  retry: 'Retry',
  loading: 'Loading…',
  empty: 'No data',
  loadFailed: 'Failed to load',
  operationSuccess: 'Operation successful',
  language: 'Language',
  notFoundTitle: 'Page not found',
  notFoundDesc: 'The page you are looking for does not exist or has been removed.',
  backHome: 'Back to home',
  errors: {
    sessionExpiredTitle: 'Notice',
    sessionExpired: 'Login status has expired, please log in again',
    relogin: 'Log in again',
    sessionInvalid: 'Invalid session, or the session has expired, please log in again',
    notFound: 'Resource does not exist',
    network: 'Network unstable, please try again later',
    timeout: 'System interface request timed out',
    server500: 'System interface 500 error',
    status: 'System interface {code} error',
    repeatSubmit: 'Data is being processed, please do not submit again',
    browserCrypto: 'This browser cannot encrypt requests: use HTTPS or another browser',
  },
} satisfies Dict<typeof zh>;
