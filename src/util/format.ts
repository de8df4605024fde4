/** 5000 → "5,000" (toLocaleString would load ICU data: ~15 ms of start-up). */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
