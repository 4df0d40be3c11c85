"""The constant pool: read lazily or eagerly, described as javap does, and appended to.

Entries are tuples ``(tag, value...)``: ``("Utf8", str)``, ``("Integer", int)``,
``("Float", bits)``, ``("Long", int)``, ``("Double", bits)``, ``("Class", name_index)``,
``("String", utf8_index)``, ``("Fieldref" | "Methodref" | "InterfaceMethodref", class_index,
nat_index)``, ``("NameAndType", name_index, descriptor_index)``, ``("MethodHandle", kind,
reference_index)``, ``("MethodType", descriptor_index)``, ``("Dynamic" | "InvokeDynamic",
bootstrap_index, nat_index)``, ``("Module" | "Package", name_index)``. Floats and doubles
keep their bit patterns, so every NaN survives a round trip.

A pool parsed *lazily* records where each entry starts and decodes an entry
only when it is asked for; an untouched pool is written back as the bytes it
came from. Appending looks an existing entry up first, by a hash index
(``lookup="hashed"``) or by scanning the pool (``lookup="linear"``, as a
transformer without an index must); :attr:`ConstantPool.comparisons` counts
the entries compared, for measuring the two.
"""
from __future__ import annotations

import struct

TAGS = {1: "Utf8", 3: "Integer", 4: "Float", 5: "Long", 6: "Double", 7: "Class", 8: "String", 9: "Fieldref",
        10: "Methodref", 11: "InterfaceMethodref", 12: "NameAndType", 15: "MethodHandle", 16: "MethodType",
        17: "Dynamic", 18: "InvokeDynamic", 19: "Module", 20: "Package"}
TAG_OF = {name: tag for tag, name in TAGS.items()}
# bytes after the tag, for the fixed-size entries
_SIZE = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}
_REFS = {"Fieldref": "Field", "Methodref": "Method", "InterfaceMethodref": "InterfaceMethod"}


class ClassFormatError(ValueError):
    """The bytes are not a well-formed class file."""


def decode_mutf8(raw: bytes) -> str:
    """Java's modified UTF-8 (NUL as C0 80, supplementary characters as surrogate pairs)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out, i, n = [], 0, len(raw)
    while i < n:
        b = raw[i]
        if b < 0x80:
            out.append(b)
            i += 1
        elif b >> 5 == 0b110 and i + 1 < n:
            out.append(((b & 0x1F) << 6) | (raw[i + 1] & 0x3F))
            i += 2
        elif b >> 4 == 0b1110 and i + 2 < n:
            out.append(((b & 0x0F) << 12) | ((raw[i + 1] & 0x3F) << 6) | (raw[i + 2] & 0x3F))
            i += 3
        else:
            raise ClassFormatError(f"bad modified UTF-8 byte {b:#x} at {i}")
    return "".join(map(chr, out)).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def encode_mutf8(text: str) -> bytes:
    """The inverse of :func:`decode_mutf8`."""
    if text.isascii() and "\0" not in text:
        return text.encode("ascii")
    units = text.encode("utf-16-be", "surrogatepass")
    out = bytearray()
    for i in range(0, len(units), 2):
        c = (units[i] << 8) | units[i + 1]
        if 0 < c < 0x80:
            out.append(c)
        elif c < 0x800:
            out += bytes((0xC0 | (c >> 6), 0x80 | (c & 0x3F)))
        else:
            out += bytes((0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)))
    return bytes(out)


class ConstantPool:
    """A class file's constant pool (index 0 and the slot after a Long or Double are unusable)."""

    def __init__(self, *, lookup: str = "hashed"):
        if lookup not in ("hashed", "linear"):
            raise ValueError(f"lookup must be 'hashed' or 'linear', got {lookup!r}")
        self.lookup = lookup
        self._raw = b""          # the bytes the pool was parsed from
        self._offsets = [None]   # per index: where its tag is in _raw (None: unusable or appended)
        self._entries = [None]   # per index: the decoded entry, or None until decoded
        self._index = None       # entry -> index, built on the first hashed lookup
        self._appended = 0
        self.comparisons = 0

    # --- reading -------------------------------------------------------------------------------
    @classmethod
    def parse(cls, data: bytes, pos: int, *, eager: bool = False, lookup: str = "hashed") -> tuple:
        """The pool starting at ``data[pos]`` (its count) and the position after it."""
        pool = cls(lookup=lookup)
        (count,) = struct.unpack_from(">H", data, pos)
        start, i, p = pos + 2, 1, pos + 2
        offsets = [None]
        while i < count:
            tag = data[p]
            offsets.append(p - start)
            if tag == 1:
                p += 3 + struct.unpack_from(">H", data, p + 1)[0]
            elif tag in _SIZE:
                p += 1 + _SIZE[tag]
            else:
                raise ClassFormatError(f"unknown constant-pool tag {tag} at entry {i}")
            if tag in (5, 6):  # a Long or Double takes two slots
                offsets.append(None)
                i += 1
            i += 1
        if p > len(data):
            raise ClassFormatError("the constant pool runs past the end of the class file")
        pool._raw = bytes(data[start:p])
        pool._offsets = offsets
        pool._entries = [None] * len(offsets)
        if eager:
            for k in range(1, len(offsets)):
                if offsets[k] is not None:
                    pool.get(k)
        return pool, p

    def __len__(self) -> int:
        """The pool's count (one more than its highest index)."""
        return len(self._entries)

    def _decode(self, index: int):
        p = self._offsets[index]
        raw, tag = self._raw, self._raw[p]
        name = TAGS[tag]
        if tag == 1:
            (n,) = struct.unpack_from(">H", raw, p + 1)
            return (name, decode_mutf8(raw[p + 3:p + 3 + n]))
        if tag == 3:
            return (name, struct.unpack_from(">i", raw, p + 1)[0])
        if tag == 4:
            return (name, struct.unpack_from(">I", raw, p + 1)[0])
        if tag == 5:
            return (name, struct.unpack_from(">q", raw, p + 1)[0])
        if tag == 6:
            return (name, struct.unpack_from(">Q", raw, p + 1)[0])
        if tag == 15:
            return (name, raw[p + 1], struct.unpack_from(">H", raw, p + 2)[0])
        if _SIZE[tag] == 2:
            return (name, struct.unpack_from(">H", raw, p + 1)[0])
        return (name, *struct.unpack_from(">HH", raw, p + 1))

    def get(self, index: int) -> tuple:
        """The entry at ``index``.

        Raises
        ------
        IndexError
            If ``index`` is 0, past the pool, or the second slot of a Long or Double.
        """
        if not 0 < index < len(self._entries):
            raise IndexError(f"constant-pool index {index} outside 1..{len(self._entries) - 1}")
        entry = self._entries[index]
        if entry is None:
            if self._offsets[index] is None:
                raise IndexError(f"constant-pool index {index} is the unusable slot after a Long or Double")
            entry = self._entries[index] = self._decode(index)
        return entry

    def __iter__(self):
        """(index, entry) for every usable index."""
        for i in range(1, len(self._entries)):
            if self._entries[i] is not None or self._offsets[i] is not None:
                yield i, self.get(i)

    def utf8(self, index: int) -> str:
        """The string of a Utf8 entry."""
        entry = self.get(index)
        if entry[0] != "Utf8":
            raise ClassFormatError(f"constant-pool entry {index} is a {entry[0]}, not Utf8")
        return entry[1]

    def class_name(self, index: int) -> str:
        """The internal name of a Class entry (``java/lang/String``, ``[I``)."""
        entry = self.get(index)
        if entry[0] != "Class":
            raise ClassFormatError(f"constant-pool entry {index} is a {entry[0]}, not Class")
        return self.utf8(entry[1])

    def name_and_type(self, index: int) -> tuple:
        """(name, descriptor) of a NameAndType entry."""
        _, name, desc = self.get(index)
        return self.utf8(name), self.utf8(desc)

    def member_ref(self, index: int) -> tuple:
        """(kind, class, name, descriptor) of a Fieldref, Methodref or InterfaceMethodref."""
        kind, cls, nat = self.get(index)
        if kind not in _REFS:
            raise ClassFormatError(f"constant-pool entry {index} is a {kind}, not a member reference")
        return (kind, self.class_name(cls), *self.name_and_type(nat))

    def describe(self, index: int) -> str:
        """The entry as javap's comment shows it (``Method java/lang/Object."<init>":()V``)."""
        entry = self.get(index)
        kind = entry[0]
        if kind in _REFS:
            _, cls, name, desc = self.member_ref(index)
            return f"{_REFS[kind]} {cls}.{_quoted(name)}:{desc}"
        if kind == "Class":
            name = self.class_name(index)
            return f'class "{name}"' if name.startswith("[") else f"class {name}"
        if kind == "String":
            return f"String {self.utf8(entry[1])}"
        if kind == "Integer":
            return f"int {entry[1]}"
        if kind == "Long":
            return f"long {entry[1]}l"
        if kind in ("Float", "Double"):
            return f"{kind.lower()} {self.number(index)!r}"
        if kind in ("Dynamic", "InvokeDynamic"):
            name, desc = self.name_and_type(entry[2])
            return f"{kind} #{entry[1]}:{_quoted(name)}:{desc}"
        if kind == "MethodType":
            return f"MethodType {self.utf8(entry[1])}"
        if kind == "MethodHandle":
            return f"MethodHandle {entry[1]}:#{entry[2]}"
        return f"{kind} {self.utf8(entry[1]) if kind in ('Module', 'Package', 'Utf8') else entry[1:]}"

    def number(self, index: int):
        """The value of an Integer, Float, Long or Double entry."""
        kind, value = self.get(index)
        if kind == "Float":
            return struct.unpack(">f", struct.pack(">I", value))[0]
        if kind == "Double":
            return struct.unpack(">d", struct.pack(">Q", value))[0]
        if kind in ("Integer", "Long"):
            return value
        raise ClassFormatError(f"constant-pool entry {index} is a {kind}, not a number")

    # --- appending --------------------------------------------------------------------------------
    def find(self, entry: tuple) -> int:
        """The index of an entry equal to ``entry``, or 0 if there is none."""
        if self.lookup == "hashed":
            if self._index is None:
                self._index = {}
                for i, e in self:
                    self._index.setdefault(e, i)
            self.comparisons += 1
            return self._index.get(entry, 0)
        for i, e in self:
            self.comparisons += 1
            if e == entry:
                return i
        return 0

    def add(self, entry: tuple) -> int:
        """The index of ``entry``, appending it if the pool does not hold it yet."""
        if entry[0] not in TAG_OF:
            raise ValueError(f"unknown constant kind {entry[0]!r}; known: {sorted(TAG_OF)}")
        found = self.find(entry)
        if found:
            return found
        index = len(self._entries)
        if index + (2 if entry[0] in ("Long", "Double") else 1) > 0xFFFF:
            raise OverflowError("the constant pool is full (65535 entries)")
        self._entries.append(entry)
        self._offsets.append(None)
        if entry[0] in ("Long", "Double"):
            self._entries.append(None)
            self._offsets.append(None)
        if self._index is not None:
            self._index[entry] = index
        self._appended += 1
        return index

    def add_utf8(self, text: str) -> int:
        return self.add(("Utf8", text))

    def add_class(self, name: str) -> int:
        return self.add(("Class", self.add_utf8(name)))

    def add_string(self, text: str) -> int:
        return self.add(("String", self.add_utf8(text)))

    def add_int(self, value: int) -> int:
        return self.add(("Integer", value))

    def add_name_and_type(self, name: str, descriptor: str) -> int:
        return self.add(("NameAndType", self.add_utf8(name), self.add_utf8(descriptor)))

    def add_member_ref(self, kind: str, cls: str, name: str, descriptor: str) -> int:
        """A Fieldref, Methodref or InterfaceMethodref to ``cls.name:descriptor``."""
        if kind not in _REFS:
            raise ValueError(f"kind must be one of {sorted(_REFS)}, got {kind!r}")
        return self.add((kind, self.add_class(cls), self.add_name_and_type(name, descriptor)))

    # --- writing ------------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The pool as a class file holds it (count first); untouched entries are copied as read."""
        parts = [struct.pack(">H", len(self._entries))]
        for i in range(1, len(self._entries)):
            p = self._offsets[i]
            if p is not None:
                tag = self._raw[p]
                size = 3 + struct.unpack_from(">H", self._raw, p + 1)[0] if tag == 1 else 1 + _SIZE[tag]
                parts.append(self._raw[p:p + size])
            elif self._entries[i] is not None:
                parts.append(_encode(self._entries[i]))
        return b"".join(parts)


def _encode(entry: tuple) -> bytes:
    kind, *values = entry
    tag = TAG_OF[kind]
    if kind == "Utf8":
        raw = encode_mutf8(values[0])
        return struct.pack(">BH", tag, len(raw)) + raw
    fmt = {"Integer": ">Bi", "Float": ">BI", "Long": ">Bq", "Double": ">BQ", "MethodHandle": ">BBH"}.get(kind)
    if fmt is None:
        fmt = ">B" + "H" * len(values)
    return struct.pack(fmt, tag, *values)


def _quoted(name: str) -> str:
    return f'"{name}"' if name.startswith("<") else name
