// Deterministic English-like text for the benchmarks: words of a synthetic 8,000-word
// vocabulary (1–4 syllables) drawn with a Zipf-like skew, so messages have the trigram
// variety and the poor compressibility of prose (a repeated filler would compress to
// nothing and index a few dozen trigrams, flattering any search design).

/** A seeded PRNG (mulberry32): the same seed gives the same text on every run. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = (
  'ta re mon ki lo sa ver un pri ga del to ar bi ne cos fu la min pe ro tis ca dor el qua ' +
  'zen ho mi str an per ex col ly ter vo gra sen tu'
).split(' ');

/** The vocabulary: 8,000 distinct words, most frequent first. */
export const VOCABULARY = (() => {
  const next = prng(42);
  const words = [];
  const seen = new Set();
  while (words.length < 8000) {
    const n = 1 + Math.floor(next() * 3.2);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(next() * SYLLABLES.length)];
    if (!seen.has(w)) {
      seen.add(w);
      words.push(w);
    }
  }
  return words;
})();

/** About `length` characters of prose-like text drawn with `next`. */
export function prose(next, length) {
  let s = '';
  while (s.length < length) {
    s += (s ? ' ' : '') + VOCABULARY[Math.floor(next() ** 2.2 * VOCABULARY.length)];
    if (next() < 0.08) s += '.';
  }
  return s.slice(0, length);
}
