"""The probe's fault map, and the rule that decides whether a convolution call matches it.

Format (written by `rmcp probe --bisect --save`, docs/probe.md):

    {"schema_version": 1,
     "faults": [{"scenario": "...", "op": "conv2d" | "conv1d", "direction": "forward" | ...,
                 "dtype": "float32", "input": [N, C, H, W], "weight": [O, C/g, kh, kw],
                 "stride": [..], "padding": [..] | "same" | "valid", "dilation": [..],
                 "groups": 1, "failure": "..."}]}

Matching rule (docs/torch.md): a call matches an entry when the op, the dtype, the weight
shape, stride, padding, dilation and groups are equal, and the input's channel and spatial
sizes (everything after the batch dimension) are equal. The batch size is ignored: a
kernel that faults at batch 16 is not trusted at batch 17. The direction is ignored too:
a routed convolution runs forward *and* backward through rmcp's operator, so a shape that
faults in either direction is routed whole. A field that an entry leaves out matches
anything (more routing, never less). Integers and one-element lists mean the same value
for every spatial dimension; padding "valid" equals zeros and "same" equals the explicit
symmetric padding it stands for when that exists.
"""
import json
import pathlib

SCHEMA_VERSION = 1

_DTYPE_NAMES = {
    "float32": "float32", "fp32": "float32", "float": "float32", "torch.float32": "float32",
    "float16": "float16", "fp16": "float16", "half": "float16", "torch.float16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16", "torch.bfloat16": "bfloat16",
    "float64": "float64", "fp64": "float64", "double": "float64", "torch.float64": "float64",
}

_OP_DIMS = {"conv1d": 1, "conv2d": 2}


class FaultMapError(ValueError):
    """A fault map that cannot be read or does not have the documented shape."""


def dtype_name(dtype):
    """'float32', 'float16', ... for a torch.dtype or any of the spellings above."""
    text = str(dtype).lower()
    if text not in _DTYPE_NAMES:
        raise FaultMapError(f"unknown dtype {dtype!r}")
    return _DTYPE_NAMES[text]


def per_dim(value, dims):
    """An int, or a sequence of 1 or `dims` ints, as a tuple of `dims` ints."""
    if isinstance(value, int):
        return (value,) * dims
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * dims
    if len(values) != dims:
        raise FaultMapError(f"{list(values)} has {len(values)} values, expected {dims}")
    return values


def canonical_padding(padding, kernel, dilation):
    """Padding as a tuple of ints where it can be, else the string 'same'."""
    dims = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * dims
        if padding != "same":
            raise FaultMapError(f"padding must be 'same', 'valid' or integers, got {padding!r}")
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        if all(t % 2 == 0 for t in totals):
            return tuple(t // 2 for t in totals)
        return "same"
    return per_dim(padding, dims)


def call_key(op, input_shape, weight_shape, dtype, stride, padding, dilation, groups):
    """The batch-free description of one call that entries are compared with."""
    dims = _OP_DIMS[op]
    weight = tuple(int(s) for s in weight_shape)
    dil = per_dim(dilation, dims)
    shape = tuple(int(s) for s in input_shape)
    # An unbatched input (C, *spatial) has the same batch-free part.
    features = shape[1:] if len(shape) == dims + 2 else shape
    return (op, dtype_name(dtype), weight, per_dim(stride, dims),
            canonical_padding(padding, weight[2:], dil), dil, int(groups), features)


class FaultMap:
    """Entries of a fault map, indexed by (op, dtype, weight shape)."""

    def __init__(self, faults=(), source="<memory>"):
        self.source = str(source)
        self.entries = []
        self._index = {}
        for number, fault in enumerate(faults):
            entry = self._parse(fault, number)
            self.entries.append(fault)
            self._index.setdefault(entry[0], []).append(entry[1])

    @classmethod
    def load(cls, spec):
        """From a path, a JSON string's parsed dict, or None/empty (an empty map)."""
        if spec is None:
            return cls()
        if isinstance(spec, FaultMap):
            return spec
        if isinstance(spec, dict):
            return cls(cls._faults_of(spec, "<dict>"), "<dict>")
        path = pathlib.Path(spec)
        try:
            document = json.loads(path.read_text())
        except OSError as error:
            raise FaultMapError(f"reading fault map {path}: {error.strerror}") from error
        except json.JSONDecodeError as error:
            raise FaultMapError(f"reading fault map {path}:{error.lineno}: {error.msg}") from error
        return cls(cls._faults_of(document, path), path)

    @staticmethod
    def _faults_of(document, source):
        if not isinstance(document, dict) or not isinstance(document.get("faults"), list):
            raise FaultMapError(f"reading fault map {source}: expected an object with a 'faults' list")
        version = document.get("schema_version")
        if version != SCHEMA_VERSION:
            raise FaultMapError(f"reading fault map {source}: schema_version {version!r}, "
                                f"this rmcp reads {SCHEMA_VERSION}")
        return document["faults"]

    def _parse(self, fault, number):
        where = f"fault map {self.source}: faults[{number}]"
        if not isinstance(fault, dict):
            raise FaultMapError(f"{where}: expected an object")
        op = fault.get("op")
        if op not in _OP_DIMS:
            raise FaultMapError(f"{where}: op must be 'conv1d' or 'conv2d', got {op!r}")
        dims = _OP_DIMS[op]
        try:
            dtype = dtype_name(fault["dtype"]) if "dtype" in fault else None
            weight = tuple(int(s) for s in fault["weight"]) if "weight" in fault else None
            if weight is not None and len(weight) != dims + 2:
                raise FaultMapError(f"weight {list(weight)} is not a {op} weight")
            dil = per_dim(fault["dilation"], dims) if "dilation" in fault else None
            fields = {
                "stride": per_dim(fault["stride"], dims) if "stride" in fault else None,
                "padding": self._padding(fault, weight, dil or (1,) * dims, dims),
                "dilation": dil,
                "groups": int(fault["groups"]) if "groups" in fault else None,
                "features": self._features(fault, dims),
            }
        except (TypeError, ValueError, KeyError) as error:
            raise FaultMapError(f"{where}: {error}") from error
        return (op, dtype, weight), (fields, fault)

    @staticmethod
    def _features(fault, dims):
        """The input's sizes after the batch dimension (the probe writes [N, C, *spatial])."""
        if "input" not in fault:
            return None
        shape = tuple(int(s) for s in fault["input"])
        if len(shape) == dims + 2:
            return shape[1:]
        if len(shape) == dims + 1:
            return shape  # already without the batch
        raise FaultMapError(f"input {list(shape)} is not a {dims}-d convolution input")

    @staticmethod
    def _padding(fault, weight, dilation, dims):
        if "padding" not in fault:
            return None
        padding = fault["padding"]
        if weight is not None:
            return canonical_padding(padding, weight[2:], dilation)
        return padding if isinstance(padding, str) else per_dim(padding, dims)

    def match(self, key):
        """The first fault entry (a dict) that a call_key() matches, or None."""
        op, dtype, weight, stride, padding, dilation, groups, features = key
        wanted = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
                  "features": features}
        for index_key in ((op, dtype, weight), (op, None, weight), (op, dtype, None), (op, None, None)):
            for fields, fault in self._index.get(index_key, ()):
                if all(value is None or value == wanted[name] for name, value in fields.items()):
                    return fault
        return None

    def __len__(self):
        return len(self.entries)
