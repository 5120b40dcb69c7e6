"""Moved to `funes_py.jsonbody` (the proxy parses its bodies with it too); kept for old imports."""

from ..jsonbody import BadRequest, JsonLimits, NotJson, check_value, parse_json, require_encodable

__all__ = ["BadRequest", "JsonLimits", "NotJson", "check_value", "parse_json", "require_encodable"]
