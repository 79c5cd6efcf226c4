// A tool shape in JavaScript (ComponentizeJS, world `tool-shape`): every tool as a Gemini
// function declaration, `{ name, description, parameters }`.
//
// Gemini takes an OpenAPI subset of JSON Schema and refuses keywords outside it
// (`additionalProperties`, `$schema`, `$ref`, vendor `x-` keys…), so `parameters` keeps only
// the keywords below, at every level. A tool without properties gets no `parameters` at all:
// that is how Gemini declares a function without arguments.

import { log } from 'toolport:plugin/log@0.1.1';

const KEPT = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'required',
  'minimum', 'maximum', 'minItems', 'maxItems', 'minLength', 'maxLength', 'pattern',
]);

/** The schema with only the keywords Gemini accepts, recursing into properties, items, anyOf. */
function gemini(schema) {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    return schema;
  }
  const out = {};
  for (const [key, value] of Object.entries(schema)) {
    if (KEPT.has(key)) {
      out[key] = value;
    } else if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [name, gemini(property)]),
      );
    } else if (key === 'items') {
      out.items = gemini(value);
    } else if (key === 'anyOf' && Array.isArray(value)) {
      out.anyOf = value.map(gemini);
    }
  }
  return out;
}

function declaration(tool) {
  const schema = JSON.parse(tool.inputSchema);
  const parameters = gemini(schema);
  const out = { name: tool.name, description: tool.description ?? tool.title ?? '' };
  if (parameters.properties && Object.keys(parameters.properties).length > 0) {
    out.parameters = parameters;
  }
  return out;
}

export const shape = {
  /** One JSON text per tool, in order; a tool whose schema is not JSON fails the server. */
  convert(server, tools) {
    const shaped = tools.map((tool) => {
      try {
        return JSON.stringify(declaration(tool));
      } catch (e) {
        throw `tool ${tool.name} of ${server.name}: ${e}`;
      }
    });
    log('debug', `shaped ${tools.length} tools of ${server.name} for Gemini`);
    return shaped;
  },
};
