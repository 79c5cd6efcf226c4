// A guard in JavaScript (ComponentizeJS, world `guard`): email addresses in what a server
// answers are replaced with `[email]` before the model (or anyone) sees them.
//
// Only the answer is looked at (`onResponse`); every request passes. The text a model reads is
// rewritten: a call's text content and every string of its structuredContent (else the address
// would still reach the model there), a read's text contents, a prompt's text messages. The
// shape stays as it was, as a mutation must: only string values change. An answer without an
// address passes unchanged, so the host has nothing to re-check.

import { log } from 'toolport:plugin/log@0.1.1';

// Good enough for redaction: a local part, an `@`, a dotted domain with a TLD of 2+ letters.
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;

/** `text` with every address replaced, and how many there were. */
function redact(text) {
  let count = 0;
  const out = text.replace(EMAIL, () => {
    count += 1;
    return '[email]';
  });
  return [out, count];
}

/** Redacts every string value inside `value` in place (keys kept); how many it replaced. */
function redactAll(value) {
  let count = 0;
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item === 'string') {
        const [out, n] = redact(item);
        value[i] = out;
        count += n;
      } else {
        count += redactAll(item);
      }
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === 'string') {
        const [out, n] = redact(item);
        value[key] = out;
        count += n;
      } else {
        count += redactAll(item);
      }
    }
  }
  return count;
}

/** Redacts one content block's `text` when it is text (`{type: 'text', text}`, a read's `{uri, text}`). */
function redactText(block) {
  if (block === null || typeof block !== 'object' || typeof block.text !== 'string') {
    return 0;
  }
  const [out, n] = redact(block.text);
  block.text = out;
  return n;
}

/** Redacts `answer` in place by its kind; how many addresses it replaced. */
function redactAnswer(kind, answer) {
  switch (kind) {
    case 'tools-call': {
      const content = Array.isArray(answer.content) ? answer.content : [];
      let count = content.reduce((n, block) => n + redactText(block), 0);
      if (answer.structuredContent !== undefined) {
        count += redactAll(answer.structuredContent);
      }
      return count;
    }
    case 'resources-read': {
      const contents = Array.isArray(answer.contents) ? answer.contents : [];
      return contents.reduce((n, block) => n + redactText(block), 0);
    }
    case 'prompts-get': {
      const messages = Array.isArray(answer.messages) ? answer.messages : [];
      return messages.reduce((n, message) => n + redactText(message && message.content), 0);
    }
    default:
      return 0;
  }
}

export const hooks = {
  onRequest(context, params) {
    return { tag: 'pass' };
  },

  onResponse(context, params, answer) {
    const value = JSON.parse(answer);
    const count = redactAnswer(context.kind, value);
    if (count === 0) {
      return { tag: 'pass' };
    }
    log('info', `redacted ${count} email address(es) in ${context.target} of ${context.server}`);
    return { tag: 'mutate', val: JSON.stringify(value) };
  },
};
