"""Class files (JVMS 17, chapter 4): parsed, edited and written back byte for byte.

>>> import pathlib, tempfile
>>> cf = ClassFile.new("demo/Hello", super_name="java/lang/Object")
>>> ClassFile.parse(cf.to_bytes()).name
'demo/Hello'

Attributes stay raw bytes (:class:`Attribute`) except a method's ``Code``,
which :meth:`Member.code` decodes into :class:`pysim.jvm.code.Code` on
request and :meth:`Member.set_code` encodes back. A class parsed and
written without edits gives back its own bytes.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from pysim.jvm.constants import ClassFormatError, ConstantPool

MAGIC = 0xCAFEBABE
ACC = {"public": 0x0001, "private": 0x0002, "protected": 0x0004, "static": 0x0008, "final": 0x0010,
       "synchronized": 0x0020, "bridge": 0x0040, "varargs": 0x0080, "native": 0x0100, "interface": 0x0200,
       "abstract": 0x0400, "strict": 0x0800, "synthetic": 0x1000, "annotation": 0x2000, "enum": 0x4000}


@dataclass
class Attribute:
    """An attribute as its name's pool index and its raw bytes."""

    name_index: int
    data: bytes

    def to_bytes(self) -> bytes:
        return struct.pack(">HI", self.name_index, len(self.data)) + self.data


@dataclass
class Member:
    """A field or a method."""

    access: int
    name_index: int
    descriptor_index: int
    attributes: list = field(default_factory=list)
    pool: ConstantPool | None = field(default=None, repr=False)
    owner_index: int = 0  # the class's own Class entry, for the method's stack-map context
    _code: object = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.pool.utf8(self.name_index)

    @property
    def descriptor(self) -> str:
        return self.pool.utf8(self.descriptor_index)

    def attribute(self, name: str) -> Attribute | None:
        """The first attribute called ``name``, or None."""
        for a in self.attributes:
            if self.pool.utf8(a.name_index) == name:
                return a
        return None

    def code(self):
        """The method's body as a :class:`pysim.jvm.code.Code` (None for abstract and native methods).

        Decoded once; edits made to it are written back by :meth:`set_code`.
        """
        if self._code is None:
            attr = self.attribute("Code")
            if attr is None:
                return None
            from pysim.jvm.code import Code
            owner = self.pool.class_name(self.owner_index) if self.owner_index else None
            self._code = Code.parse(attr.data, self.pool, (owner, self.name, self.descriptor, self.access))
        return self._code

    def set_code(self, code) -> None:
        """Replace the method's Code attribute with ``code`` encoded."""
        attr = self.attribute("Code")
        if attr is None:
            raise ValueError(f"{self.name}{self.descriptor} has no Code attribute to replace")
        attr.data = code.to_bytes()
        self._code = code

    def to_bytes(self) -> bytes:
        head = struct.pack(">HHHH", self.access, self.name_index, self.descriptor_index, len(self.attributes))
        return head + b"".join(a.to_bytes() for a in self.attributes)


def _attributes(data: bytes, pos: int) -> tuple:
    (n,) = struct.unpack_from(">H", data, pos)
    pos += 2
    out = []
    for _ in range(n):
        name, length = struct.unpack_from(">HI", data, pos)
        pos += 6
        if pos + length > len(data):
            raise ClassFormatError("an attribute runs past the end of the class file")
        out.append(Attribute(name, bytes(data[pos:pos + length])))
        pos += length
    return out, pos


def _members(data: bytes, pos: int, pool: ConstantPool) -> tuple:
    (n,) = struct.unpack_from(">H", data, pos)
    pos += 2
    out = []
    for _ in range(n):
        access, name, desc = struct.unpack_from(">HHH", data, pos)
        attrs, pos = _attributes(data, pos + 6)
        out.append(Member(access, name, desc, attrs, pool))
    return out, pos


@dataclass
class ClassFile:
    """One class file."""

    minor: int
    major: int
    pool: ConstantPool
    access: int
    this_index: int
    super_index: int
    interfaces: list
    fields: list
    methods: list
    attributes: list

    @classmethod
    def parse(cls, data: bytes, *, eager: bool = False, lookup: str = "hashed") -> "ClassFile":
        """Parse ``data``. With ``eager`` every pool entry and method body is decoded at once;
        otherwise each is decoded when first asked for.

        Raises
        ------
        ClassFormatError
            If the bytes are not a class file (bad magic, truncated, unknown pool tag).
        """
        try:
            magic, minor, major = struct.unpack_from(">IHH", data, 0)
            if magic != MAGIC:
                raise ClassFormatError(f"not a class file: magic {magic:#010x}, expected 0xcafebabe")
            pool, pos = ConstantPool.parse(data, 8, eager=eager, lookup=lookup)
            access, this, sup, n = struct.unpack_from(">HHHH", data, pos)
            interfaces = list(struct.unpack_from(f">{n}H", data, pos + 8))
            fields, pos = _members(data, pos + 8 + 2 * n, pool)
            methods, pos = _members(data, pos, pool)
            attributes, pos = _attributes(data, pos)
        except struct.error as e:
            raise ClassFormatError(f"truncated class file: {e}") from None
        if pos != len(data):
            raise ClassFormatError(f"{len(data) - pos} bytes after the end of the class file")
        for m in methods:
            m.owner_index = this
        out = cls(minor, major, pool, access, this, sup, interfaces, fields, methods, attributes)
        if eager:
            for m in methods:
                m.code()
        return out

    @classmethod
    def new(cls, name: str, *, super_name: str = "java/lang/Object", access: int = 0x0021,
            major: int = 61) -> "ClassFile":
        """An empty class (no members), version 61 (Java 17) unless told otherwise."""
        pool = ConstantPool()
        this = pool.add_class(name)
        sup = pool.add_class(super_name) if super_name else 0
        return cls(0, major, pool, access, this, sup, [], [], [], [])

    @property
    def name(self) -> str:
        return self.pool.class_name(self.this_index)

    @property
    def super_name(self) -> str | None:
        return self.pool.class_name(self.super_index) if self.super_index else None

    @property
    def interface_names(self) -> list:
        return [self.pool.class_name(i) for i in self.interfaces]

    def method(self, name: str, descriptor: str | None = None) -> Member:
        """The method called ``name`` (and ``descriptor``, if given).

        Raises
        ------
        KeyError
            If there is none, naming the methods there are.
        """
        for m in self.methods:
            if m.name == name and (descriptor is None or m.descriptor == descriptor):
                return m
        raise KeyError(f"{self.name} has no method {name}{descriptor or ''}; it has "
                       f"{sorted({m.name + m.descriptor for m in self.methods})}")

    def add_method(self, name: str, descriptor: str, access: int, code=None) -> Member:
        """Append a method; ``code`` (a :class:`pysim.jvm.code.Code`) becomes its Code attribute."""
        m = Member(access, self.pool.add_utf8(name), self.pool.add_utf8(descriptor), [], self.pool, self.this_index)
        if code is not None:
            m.attributes.append(Attribute(self.pool.add_utf8("Code"), code.to_bytes()))
            m._code = code
        self.methods.append(m)
        return m

    def to_bytes(self) -> bytes:
        parts = [struct.pack(">IHH", MAGIC, self.minor, self.major), self.pool.to_bytes(),
                 struct.pack(">HHHH", self.access, self.this_index, self.super_index, len(self.interfaces)),
                 struct.pack(f">{len(self.interfaces)}H", *self.interfaces),
                 struct.pack(">H", len(self.fields)), *(f.to_bytes() for f in self.fields),
                 struct.pack(">H", len(self.methods)), *(m.to_bytes() for m in self.methods),
                 struct.pack(">H", len(self.attributes)), *(a.to_bytes() for a in self.attributes)]
        return b"".join(parts)
