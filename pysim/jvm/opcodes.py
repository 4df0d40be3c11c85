"""The JVM's instruction set (JVMS 17, chapter 6): mnemonic and operand layout of every opcode.

Operand layouts (``FORMAT``):

* ``""``: none; ``"b"``: a signed byte (bipush); ``"s"``: a signed short (sipush);
* ``"l"``: a local-variable index (u1, or u2 after ``wide``); ``"i"``: iinc's index and constant;
* ``"c1"``, ``"c2"``: a constant-pool index (u1 for ldc, u2 otherwise);
* ``"j2"``, ``"j4"``: a branch offset (s2, s4) relative to the instruction;
* ``"iface"``: invokeinterface's index, count and zero; ``"indy"``: invokedynamic's index and two zeros;
* ``"multi"``: multianewarray's index and dimensions; ``"atype"``: newarray's element type;
* ``"table"``, ``"lookup"``: the two switches (padded to 4 bytes); ``"wide"``: the wide prefix.
"""
from __future__ import annotations

_TABLE = """
0 nop ; 1 aconst_null ; 2 iconst_m1 ; 3 iconst_0 ; 4 iconst_1 ; 5 iconst_2 ; 6 iconst_3 ; 7 iconst_4 ;
8 iconst_5 ; 9 lconst_0 ; 10 lconst_1 ; 11 fconst_0 ; 12 fconst_1 ; 13 fconst_2 ; 14 dconst_0 ;
15 dconst_1 ; 16 bipush b ; 17 sipush s ; 18 ldc c1 ; 19 ldc_w c2 ; 20 ldc2_w c2 ; 21 iload l ;
22 lload l ; 23 fload l ; 24 dload l ; 25 aload l ; 26 iload_0 ; 27 iload_1 ; 28 iload_2 ; 29 iload_3 ;
30 lload_0 ; 31 lload_1 ; 32 lload_2 ; 33 lload_3 ; 34 fload_0 ; 35 fload_1 ; 36 fload_2 ; 37 fload_3 ;
38 dload_0 ; 39 dload_1 ; 40 dload_2 ; 41 dload_3 ; 42 aload_0 ; 43 aload_1 ; 44 aload_2 ; 45 aload_3 ;
46 iaload ; 47 laload ; 48 faload ; 49 daload ; 50 aaload ; 51 baload ; 52 caload ; 53 saload ;
54 istore l ; 55 lstore l ; 56 fstore l ; 57 dstore l ; 58 astore l ; 59 istore_0 ; 60 istore_1 ;
61 istore_2 ; 62 istore_3 ; 63 lstore_0 ; 64 lstore_1 ; 65 lstore_2 ; 66 lstore_3 ; 67 fstore_0 ;
68 fstore_1 ; 69 fstore_2 ; 70 fstore_3 ; 71 dstore_0 ; 72 dstore_1 ; 73 dstore_2 ; 74 dstore_3 ;
75 astore_0 ; 76 astore_1 ; 77 astore_2 ; 78 astore_3 ; 79 iastore ; 80 lastore ; 81 fastore ;
82 dastore ; 83 aastore ; 84 bastore ; 85 castore ; 86 sastore ; 87 pop ; 88 pop2 ; 89 dup ; 90 dup_x1 ;
91 dup_x2 ; 92 dup2 ; 93 dup2_x1 ; 94 dup2_x2 ; 95 swap ; 96 iadd ; 97 ladd ; 98 fadd ; 99 dadd ;
100 isub ; 101 lsub ; 102 fsub ; 103 dsub ; 104 imul ; 105 lmul ; 106 fmul ; 107 dmul ; 108 idiv ;
109 ldiv ; 110 fdiv ; 111 ddiv ; 112 irem ; 113 lrem ; 114 frem ; 115 drem ; 116 ineg ; 117 lneg ;
118 fneg ; 119 dneg ; 120 ishl ; 121 lshl ; 122 ishr ; 123 lshr ; 124 iushr ; 125 lushr ; 126 iand ;
127 land ; 128 ior ; 129 lor ; 130 ixor ; 131 lxor ; 132 iinc i ; 133 i2l ; 134 i2f ; 135 i2d ;
136 l2i ; 137 l2f ; 138 l2d ; 139 f2i ; 140 f2l ; 141 f2d ; 142 d2i ; 143 d2l ; 144 d2f ; 145 i2b ;
146 i2c ; 147 i2s ; 148 lcmp ; 149 fcmpl ; 150 fcmpg ; 151 dcmpl ; 152 dcmpg ; 153 ifeq j2 ;
154 ifne j2 ; 155 iflt j2 ; 156 ifge j2 ; 157 ifgt j2 ; 158 ifle j2 ; 159 if_icmpeq j2 ;
160 if_icmpne j2 ; 161 if_icmplt j2 ; 162 if_icmpge j2 ; 163 if_icmpgt j2 ; 164 if_icmple j2 ;
165 if_acmpeq j2 ; 166 if_acmpne j2 ; 167 goto j2 ; 168 jsr j2 ; 169 ret l ; 170 tableswitch table ;
171 lookupswitch lookup ; 172 ireturn ; 173 lreturn ; 174 freturn ; 175 dreturn ; 176 areturn ;
177 return ; 178 getstatic c2 ; 179 putstatic c2 ; 180 getfield c2 ; 181 putfield c2 ;
182 invokevirtual c2 ; 183 invokespecial c2 ; 184 invokestatic c2 ; 185 invokeinterface iface ;
186 invokedynamic indy ; 187 new c2 ; 188 newarray atype ; 189 anewarray c2 ; 190 arraylength ;
191 athrow ; 192 checkcast c2 ; 193 instanceof c2 ; 194 monitorenter ; 195 monitorexit ; 196 wide wide ;
197 multianewarray multi ; 198 ifnull j2 ; 199 ifnonnull j2 ; 200 goto_w j4 ; 201 jsr_w j4 ;
202 breakpoint ; 254 impdep1 ; 255 impdep2
"""

NAME: dict = {}
FORMAT: dict = {}
for _entry in _TABLE.replace("\n", " ").split(";"):
    _parts = _entry.split()
    NAME[int(_parts[0])] = _parts[1]
    FORMAT[int(_parts[0])] = _parts[2] if len(_parts) > 2 else ""
OPCODE = {name: op for op, name in NAME.items()}

#: newarray's element types (JVMS Table 6.5.newarray-A).
ARRAY_TYPES = {4: "boolean", 5: "char", 6: "float", 7: "double", 8: "byte", 9: "short", 10: "int", 11: "long"}
ARRAY_TYPE_CODE = {name: code for code, name in ARRAY_TYPES.items()}

#: Opcodes after which control never falls through to the next instruction.
ENDS_BLOCK = frozenset(OPCODE[n] for n in ("goto", "goto_w", "tableswitch", "lookupswitch", "athrow", "ret",
                                             "ireturn", "lreturn", "freturn", "dreturn", "areturn", "return"))
#: Opcodes whose operand is a branch offset.
BRANCHES = frozenset(op for op, f in FORMAT.items() if f in ("j2", "j4"))
#: The conditional branches and the branch that inverts each (for widening a far branch).
INVERSE = {OPCODE[a]: OPCODE[b] for a, b in (
    ("ifeq", "ifne"), ("iflt", "ifge"), ("ifgt", "ifle"), ("if_icmpeq", "if_icmpne"), ("if_icmplt", "if_icmpge"),
    ("if_icmpgt", "if_icmple"), ("if_acmpeq", "if_acmpne"), ("ifnull", "ifnonnull"))}
INVERSE.update({b: a for a, b in list(INVERSE.items())})
#: Opcodes that ``wide`` may modify.
WIDENABLE = frozenset(OPCODE[n] for n in ("iload", "lload", "fload", "dload", "aload", "istore", "lstore", "fstore",
                                            "dstore", "astore", "ret", "iinc"))
