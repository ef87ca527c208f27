/**
 * The instance state machine (PRODUCT.md "Instances"), shared by the server (which enforces it)
 * and the web (which shows only the actions a state allows):
 *
 *   creating ─▶ running ◀─▶ stopped      (through starting / stopping)
 *      │          │           │
 *      ▼          └─▶ releasing ◀─┘ ─▶ released
 *    failed ──────────┘
 *
 * `creating` is also the state while a stopped instance's system disk is being re-made (reset
 * system, change image): it returns to `stopped`.
 */
export type InstanceState = 'creating' | 'starting' | 'running' | 'stopping' | 'stopped' | 'releasing' | 'released' | 'failed';

export const INSTANCE_STATE_LABELS: Record<InstanceState, string> = {
  creating: '创建中',
  starting: '启动中',
  running: '运行中',
  stopping: '关机中',
  stopped: '已关机',
  releasing: '释放中',
  released: '已释放',
  failed: '创建失败',
};

export type InstanceAction = 'power_on' | 'power_off' | 'release' | 'init' | 'change_image' | 'modify_name' | 'modify_password' | 'shell';

export const INSTANCE_ACTION_LABELS: Record<InstanceAction, string> = {
  power_on: '开机',
  power_off: '关机',
  release: '释放',
  init: '重置系统',
  change_image: '更换镜像',
  modify_name: '修改名称',
  modify_password: '修改密码',
  shell: '打开终端',
};

const ALLOWED: Record<InstanceState, readonly InstanceAction[]> = {
  creating: ['modify_name'],
  starting: ['modify_name'],
  running: ['power_off', 'release', 'modify_name', 'modify_password', 'shell'],
  stopping: ['modify_name'],
  stopped: ['power_on', 'release', 'init', 'change_image', 'modify_name', 'modify_password'],
  releasing: [],
  released: [],
  failed: ['release', 'modify_name'],
};

/** The actions a state allows. */
export function allowedActions(state: InstanceState): readonly InstanceAction[] {
  return ALLOWED[state];
}

export function canDo(state: InstanceState, action: InstanceAction): boolean {
  return ALLOWED[state].includes(action);
}

/** Why an action is refused in a state, in Chinese ("实例当前状态为「已关机」，无法关机"). */
export function refusal(state: InstanceState, action: InstanceAction): string {
  return `实例当前状态为「${INSTANCE_STATE_LABELS[state]}」，无法${INSTANCE_ACTION_LABELS[action]}`;
}

/** Status changes the server makes (jobs and requests); anything else is a bug. */
const TRANSITIONS: Record<InstanceState, readonly InstanceState[]> = {
  creating: ['running', 'failed', 'stopped'],
  starting: ['running', 'stopped'],
  running: ['stopping', 'releasing', 'failed'],
  stopping: ['stopped'],
  stopped: ['starting', 'creating', 'releasing'],
  releasing: ['released'],
  released: [],
  failed: ['releasing'],
};

export function canTransition(from: InstanceState, to: InstanceState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** States in which the instance holds nothing any more and is hidden by default. */
export const isGone = (state: InstanceState) => state === 'released';
