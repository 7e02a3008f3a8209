/**
 * Runs `step` and rejects with `timed out after <ms> ms: <what>` when it takes longer: a setup phase that stalls
 * names itself, where a hook's own timeout says only that the hook ran out. The step itself is not cancelled.
 */
export async function within<T>(ms: number, what: string, step: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([step(), late]);
  } finally {
    clearTimeout(timer);
  }
}
