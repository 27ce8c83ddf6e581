onmessage = async (e) => {
  try { await solve(e.data); } catch (err) { postMessage({error: String(err)}); }
};
const solve = async ({challenge, difficulty}) => {
  const enc = new TextEncoder(), tries = 2 ** difficulty;
  const zeros = (d) => { let n = 0; for (const b of d) { if (b) return n + Math.clz32(b) - 24; n += 8; } return n; };
  for (let base = 0; ; base += 256) {
    const batch = [];
    for (let i = 0; i < 256; i++) batch.push(crypto.subtle.digest("SHA-256", enc.encode(challenge + ":" + (base + i))));
    const digests = await Promise.all(batch);
    for (let i = 0; i < 256; i++) {
      if (zeros(new Uint8Array(digests[i])) >= difficulty) { postMessage({nonce: String(base + i)}); return; }
    }
    postMessage({progress: 1 - Math.exp(-(base + 256) / tries)});
  }
};
