// Preloaded into every server child of the bench (node --require): answers {type:'cpu'} over IPC with this
// process's CPU time so far (process.cpuUsage, user + system, ms). The channel is unref'd so it never keeps a
// child alive.
if (typeof process.send === 'function') {
  process.on('message', (msg) => {
    if (msg && msg.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ type: 'cpu', id: msg.id, cpuMs: (user + system) / 1000 });
    }
  });
  if (process.channel) process.channel.unref();
}
