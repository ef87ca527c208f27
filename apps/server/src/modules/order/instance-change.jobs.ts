/**
 * Issue #10 (billing changes): the persisted job that resizes an instance's data disk on the
 * driver, and the status reason a stopped instance shows meanwhile ('creating' like a reset, back to
 * 'stopped' after). In a file of its own so instance.service's start-up recovery can name them
 * without importing the change service.
 */
export const RESIZE_DISK_JOB = 'instance.resize_disk';
export const RESIZING_DISK = '正在调整数据盘';
