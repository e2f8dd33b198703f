// Module hooks (off the main thread): the first module of the `ai` package waits `ms` before it loads.
let ms = 0;
let slowed = false;

export async function initialize(data) {
  ms = data.ms;
}

export async function load(url, context, nextLoad) {
  if (!slowed && ms > 0 && /\/node_modules\/ai\//.test(url)) {
    slowed = true;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
  return nextLoad(url, context);
}
