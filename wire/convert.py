"""Engine objects <-> proto messages, both directions: the one conversion module.

Nothing here knows a game. Each game's proto messages mirror its engine
types field by field (same names), so the conversions are compiled once per
game from the dataclass type hints and the message descriptors: one generated
encoder per message writing the wire format (parsed once, in C, into the
message tree; see the wire rules below), a table of (field, converter) pairs per message
for decoding. A game whose proto and engine disagree fails loudly when its
codec is built (at server start and in the tests), never half-way through a match.

Mapping rules (engine type -> proto field):
- int, str, bool, float -> the scalar; ``X | None`` -> a field with presence (``optional``/message).
- ``Card`` -> ``Card``; an enum member ``NAME`` -> the proto enum value ``<ENUM_PREFIX>_NAME``.
- a dataclass -> a message with the same field names.
- ``tuple[X, ...]``, ``tuple[X, Y]``, ``frozenset[X]`` -> ``repeated X`` (frozensets sorted), or a
  singular "wrapper" message whose one repeated field holds them (``Cards``, ``Numbers``).
- an element ``tuple[...] | None`` of a repeated wrapper -> ``MaybeCards``-like: ``known`` + the list.
- a base class of several actions or events (``Event``) -> the game's action/event message (a oneof).

Wire rules (why and how the encoders write bytes themselves):
- Protobuf's wire format is written here, and one parse at the top (``FromString``, in C) builds
  the message tree. Building a message object per nested value instead copies it into its parent
  (element by element: a view's 30 recent events cost more than everything else in it), and the
  generated constructors spend a microsecond or more on a repeated field's keyword alone.
- Fields in the dataclass's order, which each proto numbers in the same order (protobuf writes by
  number); a 0, "" or False without presence is not written, one with presence unless None;
  doubles and floats always (a -0.0 keeps its sign); repeated scalars packed, repeated strings
  and messages one tagged value each; frozensets sorted.
- Bytes of immutable values a view repeats (events, tricks, melds) are memoized by identity
  (``_Memo``, at most ``IDENTITY_LIMIT`` entries).
- The result is exactly protobuf's own serialization of the same message, byte for byte:
  ``test_convert_writes_every_view_byte_for_byte_as_protobuf_serializes_it`` checks it on random
  playouts of every game and variant. Views, actions and events are given as bytes, and the bots'
  commonest messages are framed around them by the same rules (framing.py), never parsed.

Over 600 lines for one job: the compiler, the wire writer and the codec are three parts of one
conversion, each meaningful only with the others; split, they would only import each other.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
import re
import struct
import sys
import types
import typing
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import cache
from typing import Any

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from croupier.engine.cards import STANDARD_DECK, Card, Suit
from croupier.engine.core import Action, Event, GameSpec, InvalidOptions, MalformedInput
from croupier.engine.games import GAMES, get_game
from croupier.engine.rng import Rng
from croupier.v1 import cards_pb2, games_pb2

Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]
Lookup = Callable[[int], bytes | None]

# --- cards: the commonest values -----------------------------------------------------------

# The proto number of a card is rank * 10 + suit (cards.proto); computed from the rank (an int) and
# the suit's value (a str, hashed in C): hashing Card or Suit themselves runs Python code.
_SUIT_DIGIT = {suit.value: cards_pb2.Suit.Value(f"SUIT_{suit.name}") for suit in Suit}
_CARD_BY_NUMBER: dict[int, Card] = {
    int(cards_pb2.Card.Value(f"CARD_{card}".upper())): card for card in STANDARD_DECK
}
assert all(n == card.rank * 10 + _SUIT_DIGIT[card.suit.value] for n, card in _CARD_BY_NUMBER.items())


def card_to_proto(card: Card) -> int:
    return card.rank * 10 + _SUIT_DIGIT[card.suit._value_]


def card_from_proto(number: int, where: str = "card") -> Card:
    try:
        return _CARD_BY_NUMBER[number]
    except KeyError:
        raise MalformedInput(f"{where}: {number} is not a card (CARD_2C=21 ... CARD_AS=144)") from None


# --- the compiler ----------------------------------------------------------------------------


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _enum_prefix(descriptor: EnumDescriptor) -> str:
    return _snake(descriptor.name).upper() + "_"


def _without_none(hint: Any) -> Any | None:
    """``X`` for a hint ``X | None`` (``X`` may itself be a union), else None."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if type(None) in args:
            rest = tuple(a for a in args if a is not type(None))
            return rest[0] if len(rest) == 1 else typing.Union[rest]  # noqa: UP007 (built at run time)
    return None


def _element(hint: Any) -> Any | None:
    """The element type of ``tuple[X, ...]``, ``tuple[X, X]`` or ``frozenset[X]``, else None."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is tuple and args:
        elements = {a for a in args if a is not Ellipsis}
        if len(elements) == 1:
            return next(iter(elements))
    if origin is frozenset and args:
        return args[0]
    return None


def _positional(hint: Any) -> tuple[Any, ...] | None:
    """The element types of a fixed tuple of different types, ``tuple[int, Card]``, else None."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and Ellipsis not in args and len(set(args)) > 1:
        return args
    return None


def _fixed_length(hint: Any) -> int | None:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is tuple and Ellipsis not in args:
        return len(args)
    return None


_SCALARS: dict[Any, tuple[int, ...]] = {
    int: (
        FieldDescriptor.CPPTYPE_INT32,
        FieldDescriptor.CPPTYPE_INT64,
        FieldDescriptor.CPPTYPE_UINT32,
        FieldDescriptor.CPPTYPE_UINT64,
    ),
    float: (FieldDescriptor.CPPTYPE_DOUBLE, FieldDescriptor.CPPTYPE_FLOAT),
    bool: (FieldDescriptor.CPPTYPE_BOOL,),
    str: (FieldDescriptor.CPPTYPE_STRING,),
}
"""Which proto scalars hold each Python type (an enum field never holds a plain int)."""


def _known_wrapper(message: Descriptor) -> FieldDescriptor | None:
    """The content field of a message of a ``known`` bool and one other field (``MaybeCards``)."""
    names = set(message.fields_by_name)
    known = message.fields_by_name.get("known")
    if len(names) == 2 and known is not None and known.type == FieldDescriptor.TYPE_BOOL:
        return next(f for f in message.fields if f.name != "known")
    return None


def _list_wrapper(message: Descriptor) -> FieldDescriptor | None:
    """The one field of a message holding just a repeated field (``Cards``, ``Numbers``)."""
    if len(message.fields) == 1 and message.fields[0].is_repeated:
        return message.fields[0]
    return None


class Compiler:
    """Builds encoders and decoders for one game (polymorphic fields need its action/event tables).

    Encoders write the wire format (see "the wire" below): a message's encoder gives its bytes,
    length first; an element's scalar converter gives the proto value (None: the value as it is).
    """

    def __init__(self, polymorphic: dict[type, Callable[[], tuple[Encode, Decode]]]) -> None:
        self.polymorphic = polymorphic
        self.memo = _Memo(IDENTITY_LIMIT)
        self._messages: dict[tuple[type, str], tuple[Encode, Decode]] = {}
        self._memoized: dict[Any, Encode] = {}

    # - one dataclass <-> one message -

    def message(self, cls: type, descriptor: Descriptor, where: str) -> tuple[Encode, Decode]:
        """(encoder to the message's length-delimited bytes, decoder from the message)."""
        key = (cls, descriptor.full_name)
        if key in self._messages:
            return self._messages[key]
        hints = typing.get_type_hints(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        missing = sorted(set(names) - set(descriptor.fields_by_name))
        extra = sorted(set(descriptor.fields_by_name) - set(names))
        if missing or extra:
            raise TypeError(
                f"{where}: {cls.__name__} and {descriptor.full_name} differ: "
                f"fields missing in proto {missing}, unknown to the engine {extra}"
            )
        parts: list[_Part] = []
        decoders: list[tuple[str, Decode, bool, bool]] = []
        for name in names:
            field = descriptor.fields_by_name[name]
            encode, decode, optional = self.field(hints[name], field, f"{where}.{name}")
            parts.append(_Part(field, f"obj.{name}", encode))
            must_be_set = field.message_type is not None and not field.is_repeated and not optional
            decoders.append((name, decode, optional, must_be_set))
        encode_message = _generated_encoder(parts)

        def decode_message(msg: Any) -> Any:
            kwargs: dict[str, Any] = {}
            for name, dec, optional, must_be_set in decoders:
                if (optional or must_be_set) and not msg.HasField(name):
                    if must_be_set:
                        raise MalformedInput(f"{where}.{name} is missing")
                    kwargs[name] = None
                else:
                    kwargs[name] = dec(getattr(msg, name))
            return cls(**kwargs)

        self._messages[key] = (encode_message, decode_message)
        return encode_message, decode_message

    def field(self, hint: Any, field: FieldDescriptor, where: str) -> tuple[Writer, Decode, bool]:
        """A dataclass field: (encoder, decoder, whether the value may be None)."""
        inner = _without_none(hint)
        if inner is None:
            return (*self.value(hint, field, where), False)
        if field.is_repeated or not field.has_presence:
            raise TypeError(f"{where}: {hint} may be None, so the proto field needs presence (optional)")
        return (*self.value(inner, field, where), True)

    # - values -

    def value(self, hint: Any, field: FieldDescriptor, where: str) -> tuple[Writer, Decode]:
        """A value for ``field`` as a whole: a list for a repeated field, else one element."""
        if not field.is_repeated:
            enc_one, dec_one = self.element(hint, field, where)
            return self._writer(field, enc_one, repeated=False, sort=False), dec_one
        item = _element(hint)
        if item is None:
            raise TypeError(f"{where}: {hint} is not a sequence but the proto field is repeated")
        enc_item, dec_item = self.element(item, field, where)
        sort = typing.get_origin(hint) is frozenset
        length = _fixed_length(hint)
        builder: Callable[[Iterable[Any]], Any] = frozenset if sort else tuple
        writer = self._writer(field, enc_item, repeated=True, sort=sort)

        def decode(values: Any) -> Any:
            if length is not None and len(values) != length:
                raise MalformedInput(f"{where}: expected {length} items, got {len(values)}")
            return builder(dec_item(v) for v in values)

        return writer, decode

    def _writer(self, field: FieldDescriptor, encode: Encode | None, repeated: bool, sort: bool) -> Writer:
        if field.message_type is None:
            return _Scalar(encode, repeated, sort)
        assert encode is not None, "a message always has an encoder"
        return _Nested(encode, repeated, sort, self.memo.lookups.get(encode))

    def element(self, hint: Any, field: FieldDescriptor, where: str) -> tuple[Encode | None, Decode]:
        """One value of the field's type (one element of a repeated field).

        For a message field the encoder gives the message's length-delimited bytes, memoized
        by identity when the value is immutable (see ``_Memo``)."""
        message = field.message_type
        inner = _without_none(hint)
        if inner is not None:
            content = _known_wrapper(message) if message is not None else None
            if message is None or content is None:
                raise TypeError(f"{where}: items {hint} need a message of `known` and one field")
            return self._maybe(inner, message, content, where)
        if hint is Card:
            if field.enum_type is None or field.enum_type.full_name != "croupier.v1.Card":
                raise TypeError(f"{where}: a Card needs the croupier.v1.Card enum")
            return card_to_proto, lambda number: card_from_proto(number, where)
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            if field.enum_type is None:
                raise TypeError(f"{where}: {hint.__name__} needs a proto enum")
            return _enum(hint, field.enum_type, where)
        polymorphic = self._polymorphic(hint)
        if polymorphic is not None:
            return polymorphic
        if message is None:
            if field.cpp_type in _SCALARS.get(hint, ()):
                return None, _identity
            raise TypeError(f"{where}: {hint!r} does not fit the proto field's scalar type")
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            encode, decode = self.message(hint, message, where)
            frozen: bool = getattr(hint, "__dataclass_params__").frozen  # noqa: B009 (not in the stubs)
            return (self._memoize(encode, encode) if frozen else encode), decode
        positions = _positional(hint)
        if positions is not None:
            return self._tuple(positions, message, where)
        content = _list_wrapper(message)
        if _element(hint) is not None and content is not None:
            return self._wrap(hint, message, content, where)
        raise TypeError(f"{where}: no proto mapping for {hint!r} in {message.full_name}")

    def _record(self, key: Any, hint: Any, encode: Encode) -> Encode:
        """``encode`` memoized if ``hint`` is a fixed-size tuple, a record the state keeps whole
        (a meld, a play); a sequence of any length is a view's fresh copy of a list (a hand)."""
        return encode if _fixed_length(hint) is None else self._memoize(key, encode)

    def _memoize(self, key: Any, encode: Encode) -> Encode:
        """``encode`` memoized by identity: one table per key, shared by every field of that type."""
        memoized = self._memoized.get(key)
        if memoized is None:
            memoized = self._memoized[key] = self.memo.wrap(encode)
        return memoized

    def _polymorphic(self, hint: Any) -> tuple[Encode, Decode] | None:
        """A base class or a union of a game's actions or events: the game's oneof message."""
        if typing.get_origin(hint) in (typing.Union, types.UnionType):
            members = typing.get_args(hint)
            bases = [base for base in self.polymorphic if all(issubclass(m, base) for m in members)]
            hint = bases[0] if bases else None
        if isinstance(hint, type) and hint in self.polymorphic:
            encode, decode = self.polymorphic[hint]()
            return self._memoize(encode, encode), decode  # actions and events are frozen
        return None

    def _maybe(
        self, hint: Any, message: Descriptor, content: FieldDescriptor, where: str
    ) -> tuple[Encode, Decode]:
        """``X | None`` as a ``known`` flag beside the value (an element of a list can't be unset)."""
        enc_content, dec_content = self.value(hint, content, where)
        flag = _Part(message.fields_by_name["known"], "True", _Scalar(None, repeated=False, sort=False))
        known = _generated_encoder([flag, _Part(content, "obj", enc_content)])
        unknown = _delimited(b"")  # known=false is the default: nothing to send
        name = content.name

        def encode(value: Any) -> Any:
            return unknown if value is None else known(value)

        def decode(msg: Any) -> Any:
            return dec_content(getattr(msg, name)) if msg.known else None

        return self._record(("maybe", hint, message.full_name), hint, encode), decode

    def _wrap(
        self, hint: Any, message: Descriptor, content: FieldDescriptor, where: str
    ) -> tuple[Encode, Decode]:
        """A sequence in a one-list message: a list inside a list, or a list that may be absent."""
        enc_content, dec_content = self.value(hint, content, where)
        encode = _generated_encoder([_Part(content, "obj", enc_content)])
        name = content.name

        def decode(msg: Any) -> Any:
            return dec_content(getattr(msg, name))

        return self._record(("wrap", hint, message.full_name), hint, encode), decode

    def _tuple(self, positions: tuple[Any, ...], message: Descriptor, where: str) -> tuple[Encode, Decode]:
        """A fixed tuple of different types, ``(seat, card)``, as a message's fields in number order."""
        fields = sorted(message.fields, key=lambda f: f.number)
        if len(fields) != len(positions):
            raise TypeError(f"{where}: {message.full_name} needs {len(positions)} fields, one per tuple item")
        parts = [(f, *self.value(h, f, where)) for f, h in zip(fields, positions, strict=True)]
        encode = _generated_encoder([_Part(f, f"obj[{i}]", enc) for i, (f, enc, _) in enumerate(parts)])

        def decode(msg: Any) -> Any:
            return tuple(dec(getattr(msg, f.name)) for f, _, dec in parts)

        return self._memoize(("tuple", positions, message.full_name), encode), decode


def _enum(cls: type[enum.Enum], descriptor: EnumDescriptor, where: str) -> tuple[Encode, Decode]:
    """Engine member NAME <-> proto value <ENUM_PREFIX>_NAME."""
    prefix = _enum_prefix(descriptor)
    by_name = descriptor.values_by_name
    missing = [prefix + m.name for m in cls if prefix + m.name not in by_name]
    if missing:
        raise TypeError(f"{where}: {descriptor.full_name} lacks {', '.join(missing)}")
    to_number = {m._value_: by_name[prefix + m.name].number for m in cls}  # keyed by value: see cards
    from_number = {number: cls(value) for value, number in to_number.items()}
    allowed = ", ".join(prefix + m.name for m in cls)

    def encode(member: enum.Enum) -> int:
        return to_number[member._value_]

    def decode(number: int) -> Any:
        try:
            return from_number[number]
        except KeyError:
            raise MalformedInput(f"{where}: {number} is not one of {allowed}") from None

    return encode, decode


def _identity(value: Any) -> Any:
    return value


# --- the wire (its rules are at the top of the file) ------------------------------------------

_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5


def _varint(number: int) -> bytes:
    if not -(1 << 63) <= number < 1 << 64:
        raise ValueError(f"{number} does not fit a protobuf integer")
    number &= (1 << 64) - 1  # a negative int32/int64 is written as its 64-bit two's complement
    out = bytearray()
    while number > 0x7F:
        out.append(number & 0x7F | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


class _Varints(dict[int, bytes]):
    """Varint bytes by number, looked up in C: the small numbers (counts, seats, cards, enums)
    are stored, any other is computed (and not kept); below ``1 << 19`` (milliseconds of a deadline
    or a time bank) as its low seven bits and the rest looked up."""

    def __missing__(self, number: int) -> bytes:
        if 0 <= number < 1 << 19:
            return _CONTINUED[number & 0x7F] + self[number >> 7]
        return _varint(number)


_CONTINUED = [bytes([low | 0x80]) for low in range(0x80)]
"""A varint's byte of seven bits with more to come."""


VARINTS = _Varints((n, _varint(n)) for n in range(1 << 12))

_VARINT_BY_CARD_ID = {id(card): VARINTS[number] for number, card in _CARD_BY_NUMBER.items()}
"""STANDARD_DECK's own cards (alive for good), which every game deals: by identity, in C."""


def _card_varints(cards: Collection[Card]) -> bytes:
    try:
        return b"".join(map(_VARINT_BY_CARD_ID.__getitem__, map(id, cards)))
    except KeyError:  # a card made elsewhere (parsed from text, a constant): by its value
        return b"".join([VARINTS[card_to_proto(card)] for card in cards])


def _delimited(body: bytes) -> bytes:
    """A length-delimited value: the length as a varint, then ``body``."""
    return VARINTS[len(body)] + body


def _tag(field: FieldDescriptor, wire_type: int) -> bytes:
    return _varint(field.number << 3 | wire_type)


def field_tag(field: FieldDescriptor) -> bytes:
    """A field's tag with its wire type: length-delimited for a message, a string or a repeated
    field, else its scalar's."""
    if field.message_type is not None or field.is_repeated:
        return _tag(field, _LENGTH_DELIMITED)
    return _tag(field, _scalar_form(field)[0])


def _fill(parts: list[Any], values: Sequence[Any], encode: Encode) -> list[bytes]:
    """``parts`` with each None (a value not memoized yet) replaced by the value's bytes."""
    at = -1
    for _ in range(parts.count(None)):
        at = parts.index(None, at + 1)
        parts[at] = encode(values[at])
    return parts


@dataclasses.dataclass(frozen=True)
class _Scalar:
    """A scalar field: each value (each element of a repeated field) through ``convert`` (None:
    as it is) to the proto value; a frozenset's elements ``sort``-ed."""

    convert: Encode | None
    repeated: bool
    sort: bool


@dataclasses.dataclass(frozen=True)
class _Nested:
    """A message field: each value (each element) through ``encode`` to its length-delimited
    bytes; ``lookup`` reads the memo of an encoder that memoizes (by id; see ``_Memo``)."""

    encode: Encode
    repeated: bool
    sort: bool
    lookup: Lookup | None


Writer = _Scalar | _Nested


@dataclasses.dataclass(frozen=True)
class _Part:
    """One field of a generated encoder."""

    field: FieldDescriptor
    source: str
    """The Python expression of the engine value, reading ``obj``."""
    writer: Writer


_VARINT_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_BOOL,
        FieldDescriptor.TYPE_ENUM,
    }
)
_DOUBLES = struct.Struct("<d").pack
_FLOATS = struct.Struct("<f").pack


def _scalar_form(field: FieldDescriptor) -> tuple[int, str]:
    """(wire type, expression writing one value ``{}``) of a scalar field's type."""
    if field.type in _VARINT_TYPES:
        return _VARINT, "V[{}]"
    if field.type == FieldDescriptor.TYPE_DOUBLE:
        return _FIXED64, "F64({})"
    if field.type == FieldDescriptor.TYPE_FLOAT:
        return _FIXED32, "F32({})"
    if field.type == FieldDescriptor.TYPE_STRING:
        return _LENGTH_DELIMITED, "D({}.encode())"
    raise TypeError(f"{field.full_name}: the codec writes no fields of proto type {field.type}")


def _generated_encoder(parts: list[_Part]) -> Encode:
    """A message's length-delimited bytes, in one generated function: the hot path of every view.

    Each field is written inline: a scalar ``x = obj.dealer`` / ``if x: add(t1 + V[x])``, a packed
    list ``p = join(map(VG, x))`` / ``add(t2 + V[len(p)] + p)``, a message ``add(t3 + e3(x))`` (its
    encoder gives its length and bytes), a list of messages ``add(t4 + t4.join(map(e4, x)))``.
    """
    namespace: dict[str, Any] = {
        "D": _delimited,
        "V": VARINTS,
        "VG": VARINTS.__getitem__,
        "CV": _card_varints,
        "F64": _DOUBLES,
        "F32": _FLOATS,
        "join": b"".join,
        "fill": _fill,
    }
    lines = ["def encode(obj):", "    out = []", "    add = out.append"]
    for i, part in enumerate(parts):
        writer, source = part.writer, part.source
        if isinstance(writer, _Nested):
            namespace[f"e{i}"], namespace[f"t{i}"] = writer.encode, _tag(part.field, _LENGTH_DELIMITED)
            lines.append(f"    x = {source}")
            if not writer.repeated:
                lines += ["    if x is not None:", f"        add(t{i} + e{i}(x))"]
                continue
            lines.append("    if x:")
            if writer.sort:
                lines.append("        x = sorted(x)")
            if writer.lookup is None:
                lines.append(f"        add(t{i} + t{i}.join(map(e{i}, x)))")
                continue
            namespace[f"l{i}"] = writer.lookup  # the values seen before cost no Python-level call
            lines += [
                f"        p = list(map(l{i}, map(id, x)))",
                f"        add(t{i} + t{i}.join(p if None not in p else fill(p, x, e{i})))",
            ]
            continue
        wire_type, one = _scalar_form(part.field)
        namespace[f"c{i}"] = writer.convert

        def converted(value: str, i: int = i, writer: _Scalar = writer) -> str:
            return value if writer.convert is None else f"c{i}({value})"

        lines.append(f"    x = {source}")
        if writer.repeated:
            items = "sorted(x)" if writer.sort else "x"
            if wire_type == _LENGTH_DELIMITED:  # strings: one tagged value each
                namespace[f"t{i}"] = _tag(part.field, wire_type)
                lines.append(f"    add(join([t{i} + {one.format(converted('s'))} for s in {items}]))")
                continue
            namespace[f"t{i}"] = _tag(part.field, _LENGTH_DELIMITED)  # packed
            if writer.convert is card_to_proto and not writer.sort:
                payload = "CV(x)"
            elif wire_type == _VARINT:
                payload = f"join(map(VG, {items if writer.convert is None else f'map(c{i}, {items})'}))"
            else:
                payload = f"join([{one.format(converted('y'))} for y in {items}])"
            lines += ["    if x:", f"        p = {payload}", f"        add(t{i} + V[len(p)] + p)"]
            continue
        namespace[f"t{i}"] = _tag(part.field, wire_type)
        if part.field.has_presence:  # set, even to a default value, unless None
            lines += ["    if x is not None:", f"        add(t{i} + {one.format(converted('x'))})"]
        elif wire_type != _FIXED64 and wire_type != _FIXED32:  # a 0 or "" is the default: not written
            if writer.convert is not None:
                lines.append(f"    x = c{i}(x)")
            lines += ["    if x:", f"        add(t{i} + {one.format('x')})"]
        else:  # a 0.0 is read back as the default, and a -0.0 keeps its sign
            lines.append(f"    add(t{i} + {one.format(converted('x'))})")
    lines += ["    p = join(out)", "    return V[len(p)] + p"]
    source = "\n".join(lines)
    exec(source, namespace)  # built from field names checked against the descriptor, never from input
    encode: Encode = namespace["encode"]
    return encode


def message_writer(message: Descriptor) -> Callable[[tuple[Any, ...]], bytes]:
    """A message's length-delimited bytes from its fields' values, a tuple in number order: scalars
    as they are, a message as its serialized bytes (None: unset), a repeated message as a list of
    them. By the encoders' own rules: how framing.py writes a bot's messages around the parts."""
    parts = []
    for i, field in enumerate(sorted(message.fields, key=lambda f: f.number)):
        writer: Writer
        if field.message_type is not None:
            writer = _Nested(_delimited, repeated=field.is_repeated, sort=False, lookup=None)
        elif not field.is_repeated:
            writer = _Scalar(None, repeated=False, sort=False)
        else:
            raise TypeError(f"{field.full_name}: a writer takes no repeated scalars")
        parts.append(_Part(field, f"obj[{i}]", writer))
    write: Callable[[tuple[Any, ...]], bytes] = _generated_encoder(parts)
    return write


class _Memo:
    """Encoded bytes of immutable values (frozen dataclasses, tuples) memoized by identity.

    A match's views repeat the same objects decision after decision (the recent events, the
    finished tricks, the matches laid), and an identity lookup runs no Python-level ``__hash__``.
    The values are kept alive beside the tables, so an id in a table is never another object's;
    all tables together hold at most ``limit`` entries, then start afresh. One thread at a time
    (the referee encodes on its event loop): a clear between another thread's two steps could
    leave an entry whose value is no longer kept alive.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.alive: list[Any] = []
        self.tables: list[dict[int, bytes]] = []
        self.lookups: dict[Encode, Lookup] = {}

    def wrap(self, encode: Encode) -> Encode:
        """``encode`` memoized; ``self.lookups[result]`` reads its table."""
        table: dict[int, bytes] = {}
        self.tables.append(table)
        lookup = table.get
        alive = self.alive

        def memoized(value: Any) -> bytes:
            data = lookup(id(value))
            if data is None:
                data = encode(value)
                if len(alive) >= self.limit:
                    self.clear()
                alive.append(value)
                table[id(value)] = data
            return data

        self.lookups[memoized] = lookup
        return memoized

    def clear(self) -> None:
        for table in self.tables:
            table.clear()
        self.alive.clear()


# --- one game's codec -------------------------------------------------------------------------


def _game_types(spec: GameSpec[Any], base: type) -> list[type]:
    """The concrete dataclasses of ``base`` (Action or Event) defined in the game's module."""
    module = sys.modules[spec.new_game.__module__]
    found = [
        c
        for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, base) and c is not base and c.__module__ == module.__name__
    ]
    return [c for c in found if not any(other is not c and issubclass(other, c) for other in found)]


def _oneof_message(container: type[Message], game: str) -> Any:
    field = container.DESCRIPTOR.fields_by_name.get(game)
    message = field.message_type if field is not None else None
    if message is None:
        raise TypeError(f"{container.DESCRIPTOR.full_name} has no field for the game {game!r}")
    return message


CACHE_LIMIT = 100_000
"""Encoded actions or events kept per game before a cache starts afresh."""


def _fields_of(cls: type) -> Callable[[Any], Any]:
    """A dataclass value's fields, read in C (``attrgetter``): with the class, a cache key whose
    hash and comparison run none of the dataclass's Python ``__hash__`` and ``__eq__`` (every legal
    action of every decision is looked up; equal fields are equal bytes)."""
    names = [f.name for f in dataclasses.fields(cls)]
    return operator.attrgetter(*names) if names else _no_fields


def _no_fields(_value: Any) -> tuple[()]:
    return ()


IDENTITY_LIMIT = 50_000
"""Values whose bytes a game's codec memoizes by identity before it starts afresh: the recent
events, tricks and melds of a few hundred live matches (each entry keeps its value alive:
about 10 MB for Platinum Fish's when full)."""


class GameCodec:
    """Every conversion of one game's objects, compiled once."""

    def __init__(self, spec: GameSpec[Any]) -> None:
        self.spec = spec
        game = spec.name
        self._action_cache: dict[tuple[type, Any], bytes] = {}
        self._event_cache: dict[tuple[type, Any], bytes] = {}
        state = spec.new_game(spec.options(), Rng(0))
        self.view_type: type = type(state.public_view())
        compiler = Compiler({})
        actions = _OneofTable(
            game, _game_types(spec, Action), _oneof_message(games_pb2.Action, game), compiler
        )
        events = _OneofTable(game, _game_types(spec, Event), _oneof_message(games_pb2.Event, game), compiler)
        for base, table in ((Action, actions), (Event, events)):
            for cls in table.classes:
                for parent in cls.__mro__[1:]:
                    if issubclass(parent, base):
                        compiler.polymorphic.setdefault(parent, table.compiled)
        self._encode_action, self._decode_action = actions.compiled()
        self._fields = {cls: _fields_of(cls) for cls in (*actions.classes, *events.classes)}
        # memoized by identity: an event converted for a view's history is not encoded again
        encode_event, self._decode_event = compiler.element(
            Event, games_pb2.Event.DESCRIPTOR.fields_by_name[game], "event"
        )
        assert encode_event is not None, "events are messages"
        self._encode_event: Encode = encode_event
        view_desc = _oneof_message(games_pb2.View, game)
        self._encode_view, self._decode_view = compiler.message(self.view_type, view_desc, f"{game} view")
        options_desc = _oneof_message(games_pb2.GameOptions, game)
        self._encode_options, _ = compiler.message(spec.options_type, options_desc, f"{game} options")
        self._tags = {
            container: _tag(container.DESCRIPTOR.fields_by_name[game], _LENGTH_DELIMITED)
            for container in (games_pb2.View, games_pb2.Action, games_pb2.Event, games_pb2.GameOptions)
        }
        event_fields = games_pb2.Event.DESCRIPTOR.fields_by_name
        self._text_tag = _tag(event_fields["text"], _LENGTH_DELIMITED)
        self._text_first = event_fields["text"].number < event_fields[game].number  # written by number
        self._option_fields = [
            (name, compiler.field(hint, options_desc.fields_by_name[name], f"options.{name}")[1])
            for name, hint in typing.get_type_hints(spec.options_type).items()
            if name in options_desc.fields_by_name
        ]

    # - views, actions, events -

    def view(self, view: Any) -> games_pb2.View:
        return games_pb2.View.FromString(self.view_bytes(view))

    def view_bytes(self, view: Any) -> bytes:
        """The serialized ``games_pb2.View``: framing.py writes it into a bot's message as it is."""
        data: bytes = self._tags[games_pb2.View] + self._encode_view(view)
        return data

    def view_from_proto(self, pb: games_pb2.View) -> Any:
        return self._decode_view(self._game_part(pb, "view"))

    def action_bytes(self, action: Action) -> bytes:
        """The serialized ``games_pb2.Action``, cached (a game has few distinct actions, and legal
        lists repeat them)."""
        key = (type(action), self._fields[type(action)](action))
        data = self._action_cache.get(key)
        if data is None:
            if len(self._action_cache) >= CACHE_LIMIT:
                self._action_cache.clear()
            data = self._action_cache[key] = self._tags[games_pb2.Action] + self._encode_action(action)
        return data

    def actions_bytes(self, actions: Iterable[Action]) -> list[bytes]:
        return list(map(self.action_bytes, actions))

    def action(self, action: Action) -> games_pb2.Action:
        return games_pb2.Action.FromString(self.action_bytes(action))

    def action_from_proto(self, pb: games_pb2.Action) -> Action:
        action: Action = self._decode_action(self._game_part(pb, "action"))
        return action

    def event_bytes(self, event: Event) -> bytes:
        """The serialized ``games_pb2.Event`` (its text too), cached like actions (a match's
        events repeat across its seats, its spectators and the matches of a tournament)."""
        key = (type(event), self._fields[type(event)](event))
        data = self._event_cache.get(key)
        if data is None:
            if len(self._event_cache) >= CACHE_LIMIT:
                self._event_cache.clear()
            text = self._text_tag + _delimited(str(event).encode())
            game = self._tags[games_pb2.Event] + self._encode_event(event)
            data = self._event_cache[key] = text + game if self._text_first else game + text
        return data

    def events_bytes(self, events: Iterable[Event]) -> list[bytes]:
        return list(map(self.event_bytes, events))

    def event(self, event: Event) -> games_pb2.Event:
        return games_pb2.Event.FromString(self.event_bytes(event))

    def event_from_proto(self, pb: games_pb2.Event) -> Event:
        event: Event = self._decode_event(self._game_part(pb, "event"))
        return event

    def _game_part(self, pb: Message, what: str) -> Message:
        game = pb.WhichOneof("game")
        if game != self.spec.name:
            raise MalformedInput(
                f"the {what} is for {game or 'no game'}, but this match plays {self.spec.name}"
            )
        part: Message = getattr(pb, game)
        return part

    # - options -

    def options(self, options: Any) -> games_pb2.GameOptions:
        return games_pb2.GameOptions.FromString(
            self._tags[games_pb2.GameOptions] + self._encode_options(options)
        )

    def options_from_proto(self, pb: games_pb2.GameOptions, players: int | None = None) -> Any:
        """Options from the set fields (the rest take their defaults); ``players`` fills an unset count."""
        part = self._game_part(pb, "options")
        values: dict[str, Any] = {}
        try:
            for name, decode in self._option_fields:
                if part.HasField(name):
                    values[name] = decode(getattr(part, name))
        except MalformedInput as exc:
            raise InvalidOptions(str(exc)) from None
        if players is not None:
            values.setdefault("players", players)
        return self.spec.options(values)


class _OneofTable:
    """A game's action or event classes <-> the fields of its oneof message."""

    def __init__(self, game: str, classes: list[type], descriptor: Descriptor, compiler: Compiler) -> None:
        self.game = game
        self.compiler = compiler
        self.classes = classes
        self.descriptor = descriptor
        if len(descriptor.oneofs) != 1:
            raise TypeError(f"{descriptor.full_name} must hold exactly one oneof")
        fields = {f.name: f for f in descriptor.oneofs[0].fields}
        by_class = {c: _snake(c.__name__) for c in classes}
        missing = sorted(n for n in by_class.values() if n not in fields)
        extra = sorted(set(fields) - set(by_class.values()))
        if missing or extra:
            raise TypeError(
                f"{descriptor.full_name} and the engine's {game} classes differ: "
                f"missing in proto {missing}, unknown to the engine {extra}"
            )
        self.fields = fields
        self.by_class = by_class
        self._compiled: tuple[Encode, Decode] | None = None

    def compiled(self) -> tuple[Encode, Decode]:
        """The (encoder, decoder) of the oneof message, compiled on first use."""
        if self._compiled is not None:
            return self._compiled
        parts: dict[type, tuple[bytes, Encode]] = {}
        decoders: dict[str, Decode] = {}

        def encode(obj: Any) -> bytes:
            tag, enc = parts[type(obj)]
            return _delimited(tag + enc(obj))

        def decode(msg: Any) -> Any:
            name = msg.WhichOneof(self.descriptor.oneofs[0].name)
            if name is None:
                choices = ", ".join(self.fields)
                raise MalformedInput(f"empty {self.game} {self.descriptor.name}: set one of {choices}")
            return decoders[name](getattr(msg, name))

        self._compiled = (encode, decode)  # set first: an event may hold events
        for cls, name in self.by_class.items():
            sub = self.fields[name].message_type
            assert sub is not None, f"{self.descriptor.full_name}.{name} must be a message"
            enc, dec = self.compiler.message(cls, sub, f"{self.game} {name}")
            parts[cls] = (_tag(self.fields[name], _LENGTH_DELIMITED), enc)
            decoders[name] = dec
        return self._compiled


@cache
def codec(game: str) -> GameCodec:
    """The codec of a game by name (``InvalidOptions`` for an unknown game)."""
    return GameCodec(get_game(game))


def all_codecs() -> list[GameCodec]:
    """Build every registered game's codec: a proto that disagrees with its engine fails here."""
    return [codec(name) for name in GAMES]


def game_of_options(pb: games_pb2.GameOptions) -> str:
    game = pb.WhichOneof("game")
    if game is None:
        raise InvalidOptions(f"options name no game: set one of {', '.join(sorted(GAMES))}")
    return game
