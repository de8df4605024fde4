/** 5000 → "5,000" (toLocaleString would load ICU data: ~15 ms of start-up). */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** 1536 → "1.5 KiB". */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/**
 * What `new Date(ms).toISOString()` gives, put together from its UTC parts: a process's first
 * toISOString costs 1–2 ms (V8 sets up its date formatting), and every command that answers
 * with a snapshot or writes a journal makes one. Years outside 0–9999 go to toISOString.
 */
export function isoFromMillis(ms: number): string {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);
  const day = `${String(year).padStart(4, "0")}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}`;
  const time = `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}`;
  return `${day}T${time}.${String(date.getUTCMilliseconds()).padStart(3, "0")}Z`;
}
