//! Minimal protobuf wire reader over borrowed bytes, and a small writer.
//!
//! The reader never allocates and never panics: malformed input simply ends
//! the field iteration, so a view over damaged bytes reads as "absent".

/// Wire types of the protobuf encoding.
pub const VARINT: u8 = 0;
/// 64-bit little-endian value.
pub const FIXED64: u8 = 1;
/// Length-delimited bytes (strings, messages, packed repeated).
pub const LEN: u8 = 2;
/// Deprecated group start.
pub const START_GROUP: u8 = 3;
/// Deprecated group end.
pub const END_GROUP: u8 = 4;
/// 32-bit little-endian value.
pub const FIXED32: u8 = 5;

/// One decoded field value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
    /// A whole group (wire types 3..4), contents without the end tag.
    Group(&'a [u8]),
}

/// Decodes a varint at `pos`; returns the value and the next position.
#[inline]
pub fn read_varint(buf: &[u8], mut pos: usize) -> Option<(u64, usize)> {
    let mut out = 0u64;
    let mut shift = 0u32;
    while shift < 70 {
        let b = *buf.get(pos)?;
        pos += 1;
        out |= u64::from(b & 0x7f) << shift.min(63);
        if b < 0x80 {
            return Some((out, pos));
        }
        shift += 7;
    }
    None
}

/// Iterates over the fields of one message, in wire order.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader over a complete message.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Byte offset of the next field (equals the consumed length).
    pub fn position(&self) -> usize {
        self.pos
    }

    fn skip_group(&mut self, number: u32) -> Option<&'a [u8]> {
        let start = self.pos;
        loop {
            let tag_pos = self.pos;
            let (tag, p) = read_varint(self.buf, self.pos)?;
            self.pos = p;
            let wt = (tag & 7) as u8;
            let n = (tag >> 3) as u32;
            if wt == END_GROUP {
                return if n == number { Some(&self.buf[start..tag_pos]) } else { None };
            }
            self.value(wt, n)?;
        }
    }

    fn value(&mut self, wt: u8, number: u32) -> Option<Value<'a>> {
        match wt {
            VARINT => {
                let (v, p) = read_varint(self.buf, self.pos)?;
                self.pos = p;
                Some(Value::Varint(v))
            }
            FIXED64 => {
                let b = self.buf.get(self.pos..self.pos.checked_add(8)?)?;
                self.pos += 8;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Some(Value::Fixed64(u64::from_le_bytes(a)))
            }
            LEN => {
                let (len, p) = read_varint(self.buf, self.pos)?;
                let end = p.checked_add(usize::try_from(len).ok()?)?;
                let b = self.buf.get(p..end)?;
                self.pos = end;
                Some(Value::Bytes(b))
            }
            FIXED32 => {
                let b = self.buf.get(self.pos..self.pos.checked_add(4)?)?;
                self.pos += 4;
                let mut a = [0u8; 4];
                a.copy_from_slice(b);
                Some(Value::Fixed32(u32::from_le_bytes(a)))
            }
            START_GROUP => self.skip_group(number).map(Value::Group),
            _ => None,
        }
    }
}

impl<'a> Iterator for Reader<'a> {
    type Item = (u32, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.buf.len() {
            return None;
        }
        let parsed = read_varint(self.buf, self.pos).and_then(|(tag, p)| {
            let number = u32::try_from(tag >> 3).ok().filter(|n| *n != 0)?;
            self.pos = p;
            let v = self.value((tag & 7) as u8, number)?;
            Some((number, v))
        });
        if parsed.is_none() {
            // Stop for good on malformed input.
            self.pos = self.buf.len();
        }
        parsed
    }
}

/// First length-delimited occurrence of field `number` (Kubernetes never repeats singular fields).
#[inline]
pub fn bytes_field(buf: &[u8], number: u32) -> Option<&[u8]> {
    Reader::new(buf).find_map(|(n, v)| match v {
        Value::Bytes(b) if n == number => Some(b),
        _ => None,
    })
}

/// First varint occurrence of field `number`.
#[inline]
pub fn varint_field(buf: &[u8], number: u32) -> Option<u64> {
    Reader::new(buf).find_map(|(n, v)| match v {
        Value::Varint(x) if n == number => Some(x),
        _ => None,
    })
}

/// UTF-8 string field, or `None` if absent or not valid UTF-8.
#[inline]
pub fn str_field(buf: &[u8], number: u32) -> Option<&str> {
    bytes_field(buf, number).and_then(|b| std::str::from_utf8(b).ok())
}

/// Length of the leading complete top-level message in `buf`, stopping at the first byte
/// that cannot start a field (used when a host writes a message without its length).
pub fn message_len(buf: &[u8]) -> usize {
    let mut r = Reader::new(buf);
    let mut end = 0;
    while r.next().is_some() {
        end = r.position();
    }
    end
}

/// Appends protobuf fields to a byte vector. Used by tests and tools to build
/// messages; guests normally only read.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Writer::default()
    }

    /// The encoded bytes.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    fn raw_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn tag(&mut self, number: u32, wt: u8) {
        self.raw_varint((u64::from(number) << 3) | u64::from(wt));
    }

    /// A varint field (negative ints are sign-extended to 64 bits, as Go does).
    pub fn varint(&mut self, number: u32, v: u64) -> &mut Self {
        self.tag(number, VARINT);
        self.raw_varint(v);
        self
    }

    /// An int32/int64 field.
    pub fn int(&mut self, number: u32, v: i64) -> &mut Self {
        self.varint(number, v as u64)
    }

    /// A bool field.
    pub fn boolean(&mut self, number: u32, v: bool) -> &mut Self {
        self.varint(number, u64::from(v))
    }

    /// A length-delimited field.
    pub fn bytes(&mut self, number: u32, b: &[u8]) -> &mut Self {
        self.tag(number, LEN);
        self.raw_varint(b.len() as u64);
        self.buf.extend_from_slice(b);
        self
    }

    /// A string field.
    pub fn string(&mut self, number: u32, s: &str) -> &mut Self {
        self.bytes(number, s.as_bytes())
    }

    /// An embedded message built by `f`.
    pub fn message(&mut self, number: u32, f: impl FnOnce(&mut Writer)) -> &mut Self {
        let mut inner = Writer::new();
        f(&mut inner);
        self.bytes(number, &inner.buf)
    }

    /// A `map<string,string>` entry.
    pub fn map_entry(&mut self, number: u32, key: &str, value: &str) -> &mut Self {
        self.message(number, |w| {
            w.string(1, key).string(2, value);
        })
    }

    /// A `map<string, resource.Quantity>` entry.
    pub fn quantity_entry(&mut self, number: u32, key: &str, quantity: &str) -> &mut Self {
        self.message(number, |w| {
            w.string(1, key).message(2, |q| {
                q.string(1, quantity);
            });
        })
    }

    /// A fixed32 field.
    pub fn fixed32(&mut self, number: u32, v: u32) -> &mut Self {
        self.tag(number, FIXED32);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A fixed64 field.
    pub fn fixed64(&mut self, number: u32, v: u64) -> &mut Self {
        self.tag(number, FIXED64);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// Raw bytes (e.g. a hand-made group or garbage for robustness tests).
    pub fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX, (-1i64) as u64] {
            let mut w = Writer::new();
            w.varint(1, v);
            let got: Vec<_> = Reader::new(w.as_bytes()).collect();
            assert_eq!(got, vec![(1, Value::Varint(v))]);
        }
    }

    #[test]
    fn all_wire_types_and_skipping() {
        let mut w = Writer::new();
        w.varint(1, 5)
            .fixed64(2, 0x1122_3344_5566_7788)
            .string(3, "abc")
            .fixed32(4, 7)
            // group 5 containing field 1 varint 9, then end group 5
            .raw(&[(5 << 3) | 3, 1 << 3, 9, (5 << 3) | 4])
            .string(6, "after");
        let b = w.finish();
        let got: Vec<_> = Reader::new(&b).collect();
        assert_eq!(
            got,
            vec![
                (1, Value::Varint(5)),
                (2, Value::Fixed64(0x1122_3344_5566_7788)),
                (3, Value::Bytes(b"abc")),
                (4, Value::Fixed32(7)),
                (5, Value::Group(&[1 << 3, 9])),
                (6, Value::Bytes(b"after")),
            ]
        );
        assert_eq!(str_field(&b, 6), Some("after"));
        assert_eq!(varint_field(&b, 1), Some(5));
        assert_eq!(bytes_field(&b, 9), None);
    }

    #[test]
    fn malformed_input_stops_iteration() {
        let cases: &[&[u8]] = &[
            &[0x0a, 0x05, b'a'],       // length beyond the end
            &[0x08],                   // missing varint
            &[0x08, 0x80, 0x80],       // unterminated varint
            &[0x00, 0x01],             // field number 0
            &[0x0f],                   // wire type 7
            &[0x0b, 0x08, 0x01],       // unterminated group
            &[0x0b, 0x14],             // group ended by the wrong number
            &[0x09, 1, 2, 3],          // short fixed64
            &[0xff, 0xff, 0xff, 0xff], // garbage
        ];
        for c in cases {
            assert_eq!(Reader::new(c).count(), 0, "{:?}", c);
        }
        // Good fields before the damage are still read.
        let mut w = Writer::new();
        w.string(1, "ok").raw(&[0x12, 0x09]);
        assert_eq!(str_field(w.as_bytes(), 1), Some("ok"));
        assert_eq!(str_field(w.as_bytes(), 2), None);
    }

    #[test]
    fn invalid_utf8_reads_as_absent() {
        let mut w = Writer::new();
        w.bytes(1, &[0xff, 0xfe]);
        assert_eq!(str_field(w.as_bytes(), 1), None);
    }

    #[test]
    fn message_len_stops_at_filler() {
        let mut w = Writer::new();
        w.message(1, |m| {
            m.string(1, "pod");
        })
        .message(2, |_| {});
        let n = w.as_bytes().len();
        let mut buf = w.finish();
        buf.extend_from_slice(&[0xff; 16]);
        assert_eq!(message_len(&buf), n);
        assert_eq!(message_len(&[0xff; 4]), 0);
    }
}
