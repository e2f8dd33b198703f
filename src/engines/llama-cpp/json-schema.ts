/**
 * A JSON Schema (as zod and the AI SDK write it) in the subset llama.cpp's grammar generator
 * (node-llama-cpp `GbnfJsonSchema`) takes: `$ref`s inlined, `anyOf` as `oneOf`, `type` lists split,
 * annotations dropped. Every listed property is generated (the grammar makes them all required, in
 * order), which is what the reply parsers expect anyway; a schema part it cannot express becomes
 * "any JSON value".
 */
type Json = Record<string, unknown>;

const BASIC = new Set(["string", "number", "integer", "boolean", "null"]);
const DATE_FORMATS = new Set(["date-time", "date", "time"]);
const MAX_DEPTH = 12;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Any JSON value, two levels deep (enough for an `unrepresentable: "any"` field). */
function anyValue(depth: number): Json {
  const leaf: Json = { type: ["string", "number", "boolean", "null"] };
  if (depth <= 0) return leaf;
  const inner = anyValue(depth - 1);
  return { oneOf: [leaf, { type: "array", items: inner }, { type: "object", properties: {}, additionalProperties: inner }] };
}

function resolveRef(ref: string, root: Json): unknown {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m) return undefined;
  const defs = root[m[1] as string];
  return isObject(defs)
    ? defs[
        decodeURIComponent(m[2] as string)
          .replace(/~1/g, "/")
          .replace(/~0/g, "~")
      ]
    : undefined;
}

function convert(schema: unknown, root: Json, depth: number): Json {
  if (schema === true || depth > MAX_DEPTH || !isObject(schema)) return anyValue(1);
  if (typeof schema.$ref === "string") {
    const target = resolveRef(schema.$ref, root);
    return target === undefined ? anyValue(1) : convert(target, root, depth + 1);
  }
  if ("const" in schema) return { const: schema.const };
  if (Array.isArray(schema.enum)) return { enum: schema.enum };
  const alternatives = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (alternatives) return { oneOf: alternatives.map((s) => convert(s, root, depth + 1)) };
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return convert(schema.allOf[0], root, depth + 1);

  const types = Array.isArray(schema.type)
    ? schema.type.filter((t): t is string => typeof t === "string")
    : typeof schema.type === "string"
      ? [schema.type]
      : [];
  if (types.length === 0) {
    if (isObject(schema.properties)) return convertOne("object", schema, root, depth);
    if (schema.items !== undefined) return convertOne("array", schema, root, depth);
    return anyValue(1);
  }
  if (types.length === 1) return convertOne(types[0] as string, schema, root, depth);
  // A list of types: plain ones stay a list (["string", "null"]), constrained ones become alternatives.
  const plain = types.every((t) => BASIC.has(t)) && schema.minLength === undefined && schema.maxLength === undefined && schema.format === undefined;
  if (plain) return { type: types };
  return { oneOf: types.map((t) => convertOne(t, schema, root, depth)) };
}

function convertOne(type: string, schema: Json, root: Json, depth: number): Json {
  switch (type) {
    case "object": {
      const properties: Json = {};
      if (isObject(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) properties[k] = convert(v, root, depth + 1);
      const extra = schema.additionalProperties;
      const hasProps = Object.keys(properties).length > 0;
      // A property-less object with open extra keys is a map; otherwise exactly the listed properties.
      const additionalProperties = !hasProps && extra !== false ? (isObject(extra) ? convert(extra, root, depth + 1) : anyValue(1)) : false;
      return { type: "object", properties, additionalProperties };
    }
    case "array": {
      const out: Json = { type: "array", items: schema.items === undefined ? anyValue(1) : convert(schema.items, root, depth + 1) };
      if (typeof schema.minItems === "number") out.minItems = schema.minItems;
      if (typeof schema.maxItems === "number") out.maxItems = schema.maxItems;
      return out;
    }
    case "string": {
      if (typeof schema.format === "string" && DATE_FORMATS.has(schema.format)) return { type: "string", format: schema.format };
      const out: Json = { type: "string" };
      if (typeof schema.minLength === "number") out.minLength = schema.minLength;
      if (typeof schema.maxLength === "number") out.maxLength = schema.maxLength;
      return out;
    }
    case "number":
    case "integer":
    case "boolean":
    case "null":
      return { type };
    default:
      return anyValue(1);
  }
}

/** The grammar-ready form of a JSON Schema (see the file comment); no schema means any JSON object. */
export function toGrammarSchema(schema: unknown): Json {
  if (schema === undefined) return { type: "object", properties: {}, additionalProperties: anyValue(1) };
  return convert(schema, isObject(schema) ? schema : {}, 0);
}
