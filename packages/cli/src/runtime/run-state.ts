/**
 * What the running command is and which store it works on, so that an error reported
 * far from where the store was opened still names it (without credentials).
 */
export const runState: { command: string; store: string | undefined } = {
  command: '',
  store: undefined,
};
