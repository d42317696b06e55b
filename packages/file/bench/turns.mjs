// The turn every commit-path measure writes (targets.mjs, sqlite-peer.mjs): two messages
// of ~1 KB of prose-like text, and the JSON line a raw append writes for it.

// Text that compresses like prose (not a repeated phrase): words drawn from a vocabulary.
const WORDS = (
  'the of and to in is you that it he was for on are as with his they at be this have ' +
  'from or one had by word but not what all were we when your can said there use an each ' +
  'which she do how their if will up other about out many then them these so some her ' +
  'would make like him into time has look two more write go see number no way could ' +
  'people my than first water been call who oil its now find long down day did get come ' +
  'made may part session commit durable append index search fsync kernel journal disk'
).split(' ');
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
function prose(n) {
  let s = '';
  while (s.length < n) s += `${WORDS[Math.floor(rand() * WORDS.length)]} `;
  return s.slice(0, n);
}
const TEXTS = Array.from({ length: 64 }, () => prose(1000));
/** The messages of turn `i`. */
export const turnOf = (i) => [
  { role: 'user', content: `${i} ${TEXTS[i % 64]}` },
  { role: 'assistant', content: `${i} ${TEXTS[(i * 7 + 3) % 64]}` },
];
/** Turn `i` as the raw appends write it: its JSON and a newline. */
export const turnBytes = (i) => Buffer.from(`${JSON.stringify(turnOf(i))}\n`);
