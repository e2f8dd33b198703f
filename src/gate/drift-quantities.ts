/**
 * The figures of a text as revision drift reads them (docs/adr/ADR-036): each number — digits, a
 * fraction, a spelled number before a unit ("six nights") — with the unit it measures, if any, so
 * `4–5 days` is not supported by `4–5 pounds`; and the two ways a figure the text does not hold may
 * still come from what it does: a unit conversion of a given quantity, and plain arithmetic on the
 * given figures.
 */

/** A unit's dimension and its factor to the dimension's base (temperatures convert apart). */
interface UnitDef {
  key: string;
  dim: string;
  factor: number;
}

const U = (key: string, dim: string, factor: number): UnitDef => ({ key, dim, factor });
const UNITS: Record<string, UnitDef> = {};
function unit(def: UnitDef, ...names: string[]): void {
  for (const n of names) UNITS[n] = def;
}
// Time (base: second).
unit(U("s", "time", 1), "s", "sec", "secs", "second", "seconds");
unit(U("min", "time", 60), "min", "mins", "minute", "minutes");
unit(U("h", "time", 3600), "h", "hr", "hrs", "hour", "hours");
unit(U("day", "time", 86400), "day", "days");
unit(U("night", "night", 1), "night", "nights");
unit(U("week", "time", 604800), "week", "weeks", "wk", "wks");
unit(U("month", "time", 2629800), "month", "months");
unit(U("year", "time", 31557600), "year", "years", "yr", "yrs");
unit(U("decade", "time", 315576000), "decade", "decades");
// Mass (base: gram).
unit(U("mg", "mass", 0.001), "mg", "milligram", "milligrams");
unit(U("mcg", "mass", 0.000001), "mcg", "µg", "microgram", "micrograms");
unit(U("g", "mass", 1), "g", "gram", "grams", "gramme", "grammes");
unit(U("kg", "mass", 1000), "kg", "kilo", "kilos", "kilogram", "kilograms");
unit(U("lb", "mass", 453.592), "lb", "lbs", "pound", "pounds");
unit(U("oz", "mass", 28.3495), "oz", "ounce", "ounces");
// Volume (base: millilitre).
unit(U("ml", "volume", 1), "ml", "mL", "millilitre", "millilitres", "milliliter", "milliliters");
unit(U("l", "volume", 1000), "l", "L", "litre", "litres", "liter", "liters");
unit(U("cup", "volume", 236.588), "cup", "cups");
unit(U("tbsp", "volume", 14.787), "tbsp", "tablespoon", "tablespoons");
unit(U("tsp", "volume", 4.929), "tsp", "teaspoon", "teaspoons");
unit(U("floz", "volume", 29.574), "fl oz");
unit(U("pint", "volume", 473.176), "pint", "pints");
unit(U("quart", "volume", 946.353), "quart", "quarts");
unit(U("gal", "volume", 3785.41), "gallon", "gallons", "gal");
// Length (base: metre).
unit(U("mm", "length", 0.001), "mm", "millimetre", "millimetres", "millimeter", "millimeters");
unit(U("cm", "length", 0.01), "cm", "centimetre", "centimetres", "centimeter", "centimeters");
unit(U("m", "length", 1), "m", "metre", "metres", "meter", "meters");
unit(U("km", "length", 1000), "km", "kilometre", "kilometres", "kilometer", "kilometers");
unit(U("in", "length", 0.0254), "inch", "inches");
unit(U("ft", "length", 0.3048), "ft", "foot", "feet");
unit(U("yd", "length", 0.9144), "yd", "yard", "yards");
unit(U("mi", "length", 1609.34), "mi", "mile", "miles");
// Speed (base: km/h).
unit(U("kmh", "speed", 1), "km/h", "kph");
unit(U("mph", "speed", 1.609344), "mph");
// Data (base: byte).
unit(U("kb", "data", 1e3), "KB", "kB");
unit(U("mb", "data", 1e6), "MB");
unit(U("gb", "data", 1e9), "GB");
unit(U("tb", "data", 1e12), "TB");
// Temperature, percent, money and counts of people: no factor between them and anything else.
unit(U("C", "temp", 1), "°C", "ºC", "degrees C", "degrees Celsius", "degrees celsius");
unit(U("F", "temp", 1), "°F", "ºF", "degrees F", "degrees Fahrenheit", "degrees fahrenheit");
unit(U("%", "percent", 1), "%", "percent", "per cent");
unit(U("people", "people", 1), "people", "person", "persons", "servings", "guests");
const CURRENCY: Record<string, UnitDef> = {
  $: U("usd", "money", 1),
  "€": U("eur", "money", 1),
  "£": U("gbp", "money", 1),
  "¥": U("jpy", "money", 1),
};
unit(CURRENCY.$ as UnitDef, "USD", "dollars", "dollar");
unit(CURRENCY["€"] as UnitDef, "EUR", "euros", "euro");
unit(CURRENCY["£"] as UnitDef, "GBP");

/** Unit names longest first, as one alternation: `fl oz` before `oz`, `degrees Celsius` before… */
const UNIT_NAMES = Object.keys(UNITS).sort((a, b) => b.length - a.length);
const regexText = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** A unit after a figure: `20 pounds`, `20-pound`, `425 °F`, `15%`; not part of a longer word. */
const UNIT_AFTER = new RegExp(`^(?:\\s?-\\s?|\\s{0,2})(${UNIT_NAMES.map(regexText).join("|")})(?![\\p{L}\\d])`, "u");

const WORD_VALUES: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  hundred: 100,
  thousand: 1000,
  dozen: 12,
};
const FRACTIONS: Record<string, number> = { "¼": 0.25, "½": 0.5, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3, "⅛": 0.125, "⅜": 0.375, "⅝": 0.625, "⅞": 0.875 };

/**
 * A figure in digits: thousands separators, decimals, a fraction (`1/4`, `4¼`, `¼`). Never inside a
 * word (`v2`, `H2O`), nor joined to one by a hyphen (`utf-8`, `COVID-19`: names, not figures).
 */
const DIGITS_RE = /(?<![\p{L}\d.,/]|\p{L}-)(\d+(?:[.,]\d+)*)(?:\s?(\/)\s?(\d+)|([¼½¾⅓⅔⅛⅜⅝⅞]))?(?![\p{L}\d]|\/\d)|(?<![\p{L}\d])([¼½¾⅓⅔⅛⅜⅝⅞])/gu;
/** A spelled number (`six`, `Twenty-five`), ASCII words only: no Unicode flag, so a plain fast scan. */
const WORDS_RE = new RegExp(
  `\\b(${Object.keys(WORD_VALUES)
    .map((w) => `[${w[0]}${(w[0] as string).toUpperCase()}]${w.slice(1)}`)
    .join("|")})(?:-(one|two|three|four|five|six|seven|eight|nine))?\\b`,
  "g",
);
/** What joins the two ends of a range: `4–5`, `4 - 5`, `3 to 6`, `4 or 5`, `between 4 and 6`. */
const RANGE_JOIN = /^\s?(?:[–—-]|to|or|and)\s?$/u;

/** One figure of a text, with its unit when one follows it (or follows the other end of its range). */
export interface Figure {
  value: number;
  /** The figure as written (`11,025`, `4¼`, `six`). */
  text: string;
  /** The figure, its range and its unit as written (`4–5 days`), for a drift token that needs the unit to be read. */
  span: string;
  index: number;
  end: number;
  unit?: UnitDef;
  /** Spelled out (`six`): counted only when a unit follows. */
  word: boolean;
  /** The smallest step its written digits show: 1 for `11,025`, 0.01 for `1.05`. */
  step: number;
}

/** `1,500` and `1500` are one number; `1,5` (a decimal comma) is 1.5. */
function digitsValue(d: string): number {
  if (/^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(d)) return Number(d.replace(/,/g, ""));
  if (/^\d+,\d{1,2}$/.test(d)) return Number(d.replace(",", "."));
  return Number(d.replace(/,/g, ""));
}
function stepOf(d: string): number {
  const decimals = /\.(\d+)$/.exec(d.replace(/,(?=\d{3}\b)/g, ""))?.[1]?.length ?? 0;
  return 10 ** -decimals;
}

/** The figure at a match: its value and the step its digits show. */
function figureAt(text: string, m: RegExpExecArray, word: boolean): Figure | undefined {
  const all = m[0];
  let value: number;
  let step = 1;
  let hasDigits = false;
  if (word) {
    const [, w, tail] = m;
    value = (WORD_VALUES[(w ?? "").toLowerCase()] ?? 0) + (tail ? (WORD_VALUES[tail] ?? 0) : 0);
  } else {
    const [, digits, slash, denom, frac, lone] = m;
    if (digits !== undefined) {
      hasDigits = true;
      value = digitsValue(digits);
      step = stepOf(digits);
      if (slash && denom && Number(denom) !== 0) value /= Number(denom);
      if (frac) value += FRACTIONS[frac] ?? 0;
      if (slash || frac) step = 0.01;
    } else {
      value = FRACTIONS[lone ?? ""] ?? 0;
      step = 0.01;
    }
  }
  const index = m.index;
  let end = index + all.length;
  // A currency sign just before the figure is its unit.
  const before = text.slice(Math.max(0, index - 2), index).replace(/\s$/, "");
  let unitDef = CURRENCY[before.slice(-1)];
  if (!unitDef) {
    const after = UNIT_AFTER.exec(text.slice(end, end + 24));
    const name = after?.[1];
    const def = name ? UNITS[name] : undefined;
    // `m`, `s`, `h`, `l`, `g` alone are units only right after digits (`5 m`, `10 g`), never after a word.
    if (after && def && (hasDigits || (name?.length ?? 0) > 1)) {
      unitDef = def;
      end += after[0].length;
    }
  }
  // A spelled number counts only as a quantity (`six nights`); alone it is a word (`one of them`, `two ways`).
  if (word && !unitDef) return undefined;
  return { value, text: all, span: text.slice(index, end), index, end, ...(unitDef ? { unit: unitDef } : {}), word, step };
}

/** The figures of a text (blank out dates, URLs and numbering first: they are not figures); `scan` says which forms to look for. */
export function figuresOf(text: string, scan: { digits: boolean; words: boolean } = { digits: true, words: true }): Figure[] {
  const found: Figure[] = [];
  if (scan.digits) {
    DIGITS_RE.lastIndex = 0;
    for (let m = DIGITS_RE.exec(text); m !== null; m = DIGITS_RE.exec(text)) {
      const f = figureAt(text, m, false);
      if (f) found.push(f);
    }
  }
  if (scan.words) {
    let words = false;
    WORDS_RE.lastIndex = 0;
    for (let m = WORDS_RE.exec(text); m !== null; m = WORDS_RE.exec(text)) {
      const f = figureAt(text, m, true);
      if (f) {
        found.push(f);
        words = true;
      }
    }
    if (words) found.sort((a, b) => a.index - b.index);
  }
  // A range's first end takes the unit of its second: `3 to 6 months`, `4–5 days`, `4¼ to 5 hours`.
  for (let i = found.length - 2; i >= 0; i--) {
    const a = found[i] as Figure;
    const b = found[i + 1] as Figure;
    if (a.unit || !b.unit || !RANGE_JOIN.test(text.slice(a.end, b.index))) continue;
    found[i] = { ...a, unit: b.unit, span: text.slice(a.index, b.end) };
    found[i + 1] = { ...b, span: text.slice(a.index, b.end) };
  }
  return found;
}

/** Two figures are the same quantity: the same value, and no two different units of what they measure. */
export function sameQuantity(a: Figure, b: Figure): boolean {
  if (Math.abs(a.value - b.value) > 1e-9 * Math.max(1, Math.abs(a.value))) return false;
  if (!a.unit || !b.unit) return true;
  return a.unit.key === b.unit.key || (a.unit.dim === b.unit.dim && a.unit.dim !== "temp" && a.unit.factor === b.unit.factor);
}

/** Dimensions whose units do not convert into one another (money, percentages, people, nights). */
const NO_CONVERSION = new Set(["money", "percent", "people", "night"]);

/** A figure's value as an index key: equal within the precision `sameQuantity` compares at (a whole number is its own key). */
const valueKey = (v: number) => (Number.isInteger(v) ? v : Number(v.toPrecision(12)));

/**
 * The given figures, indexed for the questions drift asks of every figure of a revision — "the same
 * quantity given?", "the same value given in any unit?", "a conversion of a given quantity?" — each
 * a lookup or a binary search, so a long revision against a long draft stays linear in its figures.
 */
export class FigureIndex {
  private readonly byValue = new Map<number, Figure[]>();
  private readonly byUnit = new Map<string, { def: UnitDef; values: Pool }>();
  constructor(figures: readonly Figure[]) {
    const units = new Map<string, { def: UnitDef; values: number[] }>();
    for (const f of figures) this.add(f, units);
    for (const [k, u] of units) this.byUnit.set(k, { def: u.def, values: new Pool(u.values) });
  }
  private add(f: Figure, units: Map<string, { def: UnitDef; values: number[] }>): void {
    const k = valueKey(f.value);
    const list = this.byValue.get(k);
    if (list) list.push(f);
    else this.byValue.set(k, [f]);
    if (f.unit && !NO_CONVERSION.has(f.unit.dim)) {
      const u = units.get(f.unit.key) ?? { def: f.unit, values: [] };
      u.values.push(f.value);
      units.set(f.unit.key, u);
    }
  }
  /** The same quantity is given: the same value, and no other unit of what it measures. */
  has(f: Figure): boolean {
    return (this.byValue.get(valueKey(f.value)) ?? []).some((g) => sameQuantity(f, g));
  }
  /** The value is given, in whatever unit. */
  hasValue(v: number): boolean {
    return this.byValue.has(valueKey(v));
  }
  /**
   * A conversion of a given quantity into the figure's unit (`¼ cup` → `60 ml`, `425 °F` → `220 °C`),
   * rounded as conversions are written: within 5 % (2 degrees for a temperature).
   */
  converts(f: Figure): boolean {
    const to = f.unit;
    if (!to || NO_CONVERSION.has(to.dim)) return false;
    const slack = to.dim === "temp" ? Math.max(2, Math.abs(f.value) * 0.02) : Math.abs(f.value) * 0.05;
    for (const { def: from, values } of this.byUnit.values()) {
      if (from.dim !== to.dim || from.key === to.key) continue;
      if (to.dim === "temp") {
        // The given value that converts to this one, and the slack in the given unit.
        const g = from.key === "F" ? (f.value * 9) / 5 + 32 : ((f.value - 32) * 5) / 9;
        if (values.has(g, from.key === "F" ? (slack * 9) / 5 : (slack * 5) / 9)) return true;
      } else if (values.has((f.value * to.factor) / from.factor, (slack * to.factor) / from.factor)) return true;
    }
    return false;
  }
}

/** A sorted pool of values: "is there one within `slack` of `b`?" by binary search. */
class Pool {
  private readonly sorted: number[];
  constructor(values: Iterable<number>) {
    this.sorted = [...new Set(values)].filter((v) => v !== 0 && Number.isFinite(v)).sort((a, b) => a - b);
  }
  get values(): readonly number[] {
    return this.sorted;
  }
  has(b: number, slack: number): boolean {
    if (!Number.isFinite(b) || this.sorted.length === 0) return false;
    const eps = Math.max(Math.abs(slack), 1e-9 * Math.max(1, Math.abs(b)));
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.sorted[mid] as number) < b - eps) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.sorted.length && (this.sorted[lo] as number) <= b + eps;
  }
}

/** A year (`1887`, `2024`): a four-digit whole number with no unit and no separator. Never worked out by arithmetic. */
const isYear = (f: Figure) => !f.unit && /^(1[0-9]|2[01])\d\d$/.test(f.text);

/** The given figures arranged for `isDerived`: by unit (bare ones apart), and the factors any unit may scale by. */
export class Operands {
  private readonly byUnit = new Map<string, number[]>();
  private readonly all: number[] = [];
  private pools = new Map<string, Pool>();
  add(f: Figure): void {
    if (f.unit?.dim === "temp" || isYear(f)) return;
    const k = f.unit?.key ?? "";
    const list = this.byUnit.get(k) ?? [];
    list.push(f.value);
    this.byUnit.set(k, list);
    this.all.push(f.value);
    this.pools.clear();
  }
  /** Values in this unit (`""`: bare). */
  same(unitKey: string): Pool {
    return this.pool(unitKey, () => this.byUnit.get(unitKey) ?? []);
  }
  /** Any value (a factor: a count, a rate, a number of months). */
  any(): Pool {
    return this.pool("\u0000any", () => this.all);
  }
  /** Percentages and bare values: what a percentage change can be. */
  percents(): Pool {
    return this.pool("\u0000pct", () => [...(this.byUnit.get("%") ?? []), ...(this.byUnit.get("") ?? [])]);
  }
  private pool(key: string, values: () => number[]): Pool {
    let p = this.pools.get(key);
    if (!p) this.pools.set(key, (p = new Pool(values())));
    return p;
  }
}

/**
 * Worked out from given figures by one plain operation, to the precision its digits show, with its
 * working beside it: a sum or a difference of two figures in its unit, a figure in its unit scaled
 * by any given one (`$2,500 … 3 to 6 months` → `$7,500`; `$10,500 × 1.05 = $11,025`), a
 * percentage of one or one changed by one, one as a percentage of another (`350 g water to 500 g
 * flour` → `70%`). The figure in its own unit must stand in the revision's sentence (`near`): the
 * working a reader can check, and what keeps `€220 − €120` from "deriving" a new `€100` found
 * elsewhere. Only a figure specific enough to be told from chance — an amount of money, a
 * percentage, or 100 and above, never a year or a temperature: small counts and durations (`4–5
 * days`, `six nights`) are reachable from almost any text's figures, so they never pass this way
 * (docs/adr/ADR-036).
 */
export function isDerived(f: Figure, near: Operands, operands: Operands): boolean {
  const dim = f.unit?.dim;
  if (dim === "temp" || isYear(f)) return false;
  if (!(dim === "money" || dim === "percent" || Math.abs(f.value) >= 100)) return false;
  const own = near.same(f.unit?.key ?? "");
  const any = operands.any();
  const pct = operands.percents();
  const r = f.value;
  const half = f.step / 2;
  for (const a of own.values) {
    const ab = Math.abs(a);
    if (own.has(r - a, half) || own.has(a - r, half)) return true; // a + b, a − b
    if (any.has(r / a, half / ab) || any.has(a / r, (ab * half) / (r * r))) return true; // a × k, a ÷ k
    if (pct.has((100 * r) / a, (100 * half) / ab)) return true; // k % of a
    if (pct.has(100 * (r / a - 1), (100 * half) / ab) || pct.has(100 * (1 - r / a), (100 * half) / ab)) return true; // a ± k %
  }
  if (dim === "percent") {
    // a as a percentage of b, both beside it: 350 g of 500 g is 70 %.
    const beside = near.any();
    for (const a of beside.values) if (beside.has((100 * a) / r, (100 * Math.abs(a) * half) / (r * r))) return true;
  }
  return false;
}
