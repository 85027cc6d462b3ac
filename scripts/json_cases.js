// Checks cases with JavaScript's own JSON.parse, for grader-core's `json` module to compare with.
//
// Reads a JSON array of cases on stdin and writes a JSON array of results, one per case:
//   {"f": "is_json", "text": "..."}             -> true | false: JSON.parse(text) succeeds
//   {"f": "objects", "text": "..."}             -> the texts promptfoo's extractJsonObjects finds:
//        from each "{", the shortest slice JSON.parse accepts (at most 100000 code units),
//        the search going on after each object found
//   {"f": "equals", "text": "...", "expected": v} -> null when text is not JSON, else whether
//        the parsed value equals v: objects by keys, arrays in order, numbers by ===
"use strict";

function objects(str) {
  const found = [];
  const maxJsonLength = 100000;
  for (let i = 0; i < str.length; i++) {
    if (str[i] !== "{") continue;
    for (let j = i + 1; j <= Math.min(i + maxJsonLength, str.length); j++) {
      const slice = str.slice(i, j);
      let ok = true;
      try {
        JSON.parse(slice);
      } catch {
        ok = false;
      }
      if (ok) {
        found.push(slice);
        i = j - 1;
        break;
      }
    }
  }
  return found;
}

function same(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  }
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
  }
  return a === b;
}

function run(c) {
  if (c.f === "is_json") {
    try {
      JSON.parse(c.text);
      return true;
    } catch {
      return false;
    }
  }
  if (c.f === "objects") return objects(c.text);
  if (c.f === "equals") {
    let v;
    try {
      v = JSON.parse(c.text);
    } catch {
      return null;
    }
    return same(v, c.expected);
  }
  throw new Error("unknown case " + c.f);
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  process.stdout.write(JSON.stringify(JSON.parse(input).map(run)));
});
