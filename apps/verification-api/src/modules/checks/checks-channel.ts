/**
 * The channel on which the worker's step discovery LISTENs: the SDK repository NOTIFYs it after a commit that
 * submitted a step or an enrollment (decision 0407).
 */
export const CHECKS_CHANNEL = 'verification_checks';
