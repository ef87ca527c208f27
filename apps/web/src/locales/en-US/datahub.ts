import type { Dict } from '../types.ts';
import type zh from '../zh-CN/datahub.ts';

export default {
  menu: {
    loading: 'Loading datacenters…',
    empty: 'No datacenters available',
    error: 'Failed to load datacenters, click to retry',
  },
  title: 'Datahub · {name}',
  datacenter: 'Datacenter',
  status: 'Status',
  name: 'Name',
  activatedAt: 'Activated at',
  statusInactive: 'To be activated',
  statusActivating: 'Activating',
  statusActive: 'Activated',
  intro: 'A datahub is your own storage area in this datacenter, for moving datasets, models and code between your computer and your container instances.',
  confirmActivate: 'Activating creates your storage area in “{name}” right away, usually within seconds. It cannot be undone and is needed once per datacenter.',
  activatingHint: 'Creating your storage area. The status refreshes every 3 seconds; you may close this window and will be told when it is ready.',
  activeHint: 'The storage area is ready; container instances in this datacenter can reach its data.',
  activate: 'Activate',
  close: 'Close',
  namePlaceholder: 'Name your datahub',
  nameRequired: 'Please enter a datahub name',
  nameTooLong: 'The name cannot exceed {max} characters',
  nameInvalid: 'The name cannot contain invisible control characters',
  loadFailed: 'Failed to load the datahub status',
} satisfies Dict<typeof zh>;
