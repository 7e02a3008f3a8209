// Preloaded into every server child of the bench (node --require): answers {type:'cpu'} over IPC with this
// process's CPU time so far (process.cpuUsage, user + system, ms). The channel is unref'd so it never keeps a
// child alive; a child whose bench process has gone away stops itself.
if (typeof process.send === 'function') {
  process.on('message', (msg) => {
    if (msg && msg.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ type: 'cpu', id: msg.id, cpuMs: (user + system) / 1000 });
    }
  });
  // The bench process gone (crash, Ctrl-C): shut down as on SIGTERM rather than linger as an orphan.
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  if (process.channel) process.channel.unref();
}
