/**
 * The channel on which the worker's ApprovedStarts LISTENs: the API NOTIFYs it after a vote that reached its
 * withdrawal's quorum has committed (decision 0491).
 */
export const APPROVED_STARTS_CHANNEL = 'custody_approved_starts';
