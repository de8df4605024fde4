/**
 * Watchman's binary protocol (BSER version 1), as far as one query needs it. Its strings are
 * bytes, so a file name that is not UTF-8 arrives exactly (Watchman's JSON encoder gives up on
 * one and never answers). Integers are little-endian, as Watchman writes them on the platforms
 * Node runs on.
 */

export type BserValue =
  | null
  | boolean
  | number
  | bigint
  | Buffer
  | BserValue[]
  | { [key: string]: BserValue };

const ARRAY = 0x00;
const OBJECT = 0x01;
const BYTES = 0x02;
const INT8 = 0x03;
const INT16 = 0x04;
const INT32 = 0x05;
const INT64 = 0x06;
const REAL = 0x07;
const TRUE = 0x08;
const FALSE = 0x09;
const NULL = 0x0a;
const TEMPLATE = 0x0b;
const SKIP = 0x0c;
const UTF8 = 0x0d;

/** One request as a PDU: strings, numbers, booleans, arrays and objects. */
export function encodePdu(value: unknown): Buffer {
  const parts: Buffer[] = [];
  encode(value, parts);
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([0x00, 0x01]), int32(body.length), body]);
}

function int32(n: number): Buffer {
  const buffer = Buffer.alloc(5);
  buffer[0] = INT32;
  buffer.writeInt32LE(n, 1);
  return buffer;
}

function encode(value: unknown, parts: Buffer[]): void {
  if (value === null) parts.push(Buffer.from([NULL]));
  else if (value === true || value === false) parts.push(Buffer.from([value ? TRUE : FALSE]));
  else if (typeof value === "number" && Number.isInteger(value)) parts.push(int32(value));
  else if (typeof value === "string" || Buffer.isBuffer(value)) {
    const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value, "utf8");
    parts.push(Buffer.from([BYTES]), int32(bytes.length), bytes);
  } else if (Array.isArray(value)) {
    parts.push(Buffer.from([ARRAY]), int32(value.length));
    for (const item of value) encode(item, parts);
  } else if (typeof value === "object") {
    const entries = Object.entries(value as object);
    parts.push(Buffer.from([OBJECT]), int32(entries.length));
    for (const [key, item] of entries) {
      encode(key, parts);
      encode(item, parts);
    }
  } else throw new Error(`BSER cannot encode ${typeof value}`);
}

/** The length of the PDU that starts `buffer` (header included), or null until enough has arrived. */
export function pduLength(buffer: Buffer): number | null {
  if (buffer.length < 3) return null;
  if (buffer[0] !== 0x00 || buffer[1] !== 0x01) throw new Error("not a BSER v1 PDU");
  const size = INT_SIZES[buffer[2]];
  if (size === undefined) throw new Error("bad BSER PDU length");
  if (buffer.length < 3 + size) return null;
  return 3 + size + Number(new Reader(buffer, 2).int());
}

/** The value of one whole PDU (`buffer` holds exactly it). */
export function decodePdu(buffer: Buffer): BserValue {
  const reader = new Reader(buffer, 2);
  reader.int();
  const value = reader.value();
  if (reader.pos !== buffer.length) throw new Error("BSER PDU of the wrong length");
  return value;
}

const INT_SIZES: Record<number, number> = { [INT8]: 1, [INT16]: 2, [INT32]: 4, [INT64]: 8 };

class Reader {
  constructor(
    private readonly buffer: Buffer,
    public pos: number,
  ) {}

  private need(n: number): void {
    if (this.pos + n > this.buffer.length) throw new Error("BSER value runs past its PDU");
  }

  int(): number | bigint {
    this.need(1);
    const type = this.buffer[this.pos++];
    const size = INT_SIZES[type];
    if (size === undefined) throw new Error(`BSER integer expected, found type ${type}`);
    this.need(size);
    const at = this.pos;
    this.pos += size;
    if (size === 1) return this.buffer.readInt8(at);
    if (size === 2) return this.buffer.readInt16LE(at);
    if (size === 4) return this.buffer.readInt32LE(at);
    const big = this.buffer.readBigInt64LE(at);
    return big >= Number.MIN_SAFE_INTEGER && big <= Number.MAX_SAFE_INTEGER ? Number(big) : big;
  }

  private count(): number {
    const n = Number(this.int());
    if (n < 0) throw new Error("negative BSER length");
    return n;
  }

  value(): BserValue {
    this.need(1);
    const type = this.buffer[this.pos];
    switch (type) {
      case ARRAY: {
        this.pos++;
        const n = this.count();
        const items: BserValue[] = [];
        for (let i = 0; i < n; i++) items.push(this.value());
        return items;
      }
      case OBJECT: {
        this.pos++;
        const n = this.count();
        const object: { [key: string]: BserValue } = {};
        for (let i = 0; i < n; i++) object[this.key()] = this.value();
        return object;
      }
      case BYTES:
      case UTF8: {
        this.pos++;
        const n = this.count();
        this.need(n);
        const bytes = this.buffer.subarray(this.pos, this.pos + n);
        this.pos += n;
        return bytes;
      }
      case INT8:
      case INT16:
      case INT32:
      case INT64:
        return this.int();
      case REAL:
        this.pos++;
        this.need(8);
        this.pos += 8;
        return this.buffer.readDoubleLE(this.pos - 8);
      case TRUE:
      case FALSE:
      case NULL:
        this.pos++;
        return type === NULL ? null : type === TRUE;
      case TEMPLATE:
        return this.template();
      default:
        throw new Error(`unknown BSER type ${type}`);
    }
  }

  private key(): string {
    const key = this.value();
    if (!Buffer.isBuffer(key)) throw new Error("BSER object key is not a string");
    return key.toString("utf8");
  }

  /** An array of objects sharing one list of keys; a skipped field is absent from its object. */
  private template(): BserValue[] {
    this.pos++;
    const keys = this.value();
    if (!Array.isArray(keys) || !keys.every(Buffer.isBuffer)) throw new Error("bad BSER template keys");
    const names = (keys as Buffer[]).map((k) => k.toString("utf8"));
    const n = this.count();
    const rows: BserValue[] = [];
    for (let i = 0; i < n; i++) {
      const row: { [key: string]: BserValue } = {};
      for (const name of names) {
        this.need(1);
        if (this.buffer[this.pos] === SKIP) this.pos++;
        else row[name] = this.value();
      }
      rows.push(row);
    }
    return rows;
  }
}
