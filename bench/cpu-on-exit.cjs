// Preloaded into a bench's CLI process (NODE_OPTIONS=--require): on exit, the process's own CPU time
// (user + system, µs) is written to the file named by DISSENT_BENCH_CPU_OUT. CPU time moves far less
// with the machine's load than wall time does, so builds compare on it even on a shared machine.
const out = process.env.DISSENT_BENCH_CPU_OUT;
delete process.env.DISSENT_BENCH_CPU_OUT; // the process's own children are not measured into the same file
if (out) process.on("exit", () => require("node:fs").writeFileSync(out, JSON.stringify(process.cpuUsage())));
