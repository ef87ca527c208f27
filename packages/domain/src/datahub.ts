/** SPEC §4 datahub states: 0 = activating, 1 = activated (null data = never activated). */
export const datahubStatus = { activating: 0, activated: 1 } as const;
export type DatahubStatus = (typeof datahubStatus)[keyof typeof datahubStatus];

export const DATAHUB_NAME_MAX = 64;
