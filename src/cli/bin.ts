#!/usr/bin/env node
import { fail, processIo } from "./io.js";
import { run } from "./main.js";

const io = processIo();
const exit = (code: number) => {
  // Let stdout drain before leaving: a piped reader must get every byte.
  process.exitCode = code;
  process.stdout.write("", () => process.exit(code));
};
run(process.argv.slice(2), io).then(exit, (e) => exit(fail(e, io, process.argv.includes("--verbose"))));
