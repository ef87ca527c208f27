/** The `local` compute adapter: each instance is a bubblewrap sandbox on this host (see local/driver.ts, docs/compute-driver.md). */
export { createLocalDriver, HOST_USR_DIR, type LocalDriverOptions } from './local/driver.ts';
