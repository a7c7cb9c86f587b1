/**
 * Tones for the voice tests: what a test participant sends (a sine at a chosen frequency, 16-bit
 * PCM in 10 ms frames, as wrtc's RTCAudioSource takes it) and how it judges what it hears (the
 * dominant frequency, by the Goertzel algorithm under a Hann window, and the level). Pure.
 */

/** `length` samples of a sine at `frequency` Hz starting at sample `start` (so frames join without a click); amplitude 0..1 of full scale. */
export function toneSamples(frequency: number, sampleRate: number, start: number, length: number, amplitude = 0.3): Int16Array {
  const out = new Int16Array(length);
  const step = (2 * Math.PI * frequency) / sampleRate;
  for (let i = 0; i < length; i++) out[i] = Math.round(amplitude * 32767 * Math.sin(step * (start + i)));
  return out;
}

/** The root mean square of 16-bit samples, 0 (silence) to 1 (full scale). */
export function rms(samples: ArrayLike<number>): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] * samples[i];
  return Math.sqrt(sum / samples.length) / 32768;
}

/** The power of `frequency` in windowed samples: one Goertzel pass (any frequency, not only a bin's). */
function power(windowed: Float64Array, frequency: number, sampleRate: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * frequency) / sampleRate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < windowed.length; i++) {
    const s = windowed[i] + coeff * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return s1 * s1 + s2 * s2 - coeff * s1 * s2;
}

/**
 * The frequency with the most power between `minHz` and `maxHz`: a scan at the resolution the
 * window allows (sampleRate / length), then a finer one around the best, to a tenth of a hertz.
 * Null for silence (nothing to judge).
 */
export function dominantFrequency(samples: ArrayLike<number>, sampleRate: number, minHz = 50, maxHz = 4_000): number | null {
  const n = samples.length;
  if (n < 64 || rms(samples) < 1e-4) return null;
  const windowed = new Float64Array(n);
  for (let i = 0; i < n; i++) windowed[i] = samples[i] * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1)));
  const bin = sampleRate / n;
  let best = minHz;
  let bestPower = -1;
  for (let f = minHz; f <= maxHz; f += bin / 2) {
    const p = power(windowed, f, sampleRate);
    if (p > bestPower) [best, bestPower] = [f, p];
  }
  const coarse = best;
  for (let f = coarse - bin; f <= coarse + bin; f += 0.1) {
    const p = power(windowed, f, sampleRate);
    if (p > bestPower) [best, bestPower] = [f, p];
  }
  return Math.round(best * 10) / 10;
}
