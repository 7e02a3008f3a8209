// In-process measurement (for benches of a library path, no server): calls per second and CPU ms per call of
// this process (process.cpuUsage), for `seconds` of wall time.
export async function measureCalls(fn, seconds) {
  const deadline = Date.now() + seconds * 1000;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let n = 0;
  while (Date.now() < deadline) {
    const r = fn(n);
    if (r && typeof r.then === 'function') await r;
    n++;
  }
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  return { perSecond: (n * 1000) / wallMs, count: n, cpuMsEach: (cpu.user + cpu.system) / 1000 / n };
}
