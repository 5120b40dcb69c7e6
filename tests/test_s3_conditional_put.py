"""The conditional PUT that Lance's commits rest on, probed on the real S3 server (SeaweedFS, tests/s3_helpers.py).

A Lance commit writes the next manifest with `If-None-Match: *`: of several writers racing for one version,
exactly one may win, and the others must be told (412 Precondition Failed, or 409 ConditionalRequestConflict,
which AWS also answers to a racing conditional write) so that they retry on the next version. If two could
win, two commits would each believe they made the same version and one of them would be lost.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter

from s3_helpers import S3Client, S3Response, SeaweedS3

REFUSED = (412, 409)
WRITERS = 16
KEYS = 20
KEYS_AT_ONCE = 10


def _key(name: str) -> str:
    return f"conditional-put/{uuid.uuid4().hex}/{name}"


def test_if_none_match_creates_once_and_keeps_the_first_body(s3_server: SeaweedS3) -> None:
    c = s3_server.client()
    key = _key("_versions/1.manifest")

    first = c.put(s3_server.bucket, key, b"first", {"If-None-Match": "*"})
    assert first.status == 200, first
    second = c.put(s3_server.bucket, key, b"second", {"If-None-Match": "*"})
    assert second.status == 412, second
    assert second.error_code() == "PreconditionFailed"
    assert c.get(s3_server.bucket, key).body == b"first"
    # An unconditional PUT still overwrites (the condition is what makes the difference).
    assert c.put(s3_server.bucket, key, b"third").status == 200
    assert c.get(s3_server.bucket, key).body == b"third"


def _race(c: S3Client, bucket: str, keys: list[str], writers: int) -> dict[str, list[tuple[bytes, S3Response]]]:
    """For each key, `writers` threads send PUT If-None-Match: * with a body of their own, all keys at once:
    every thread opens its connection first, then a barrier releases them together."""
    jobs = [(key, f"writer {i} {uuid.uuid4().hex}".encode()) for key in keys for i in range(writers)]
    results: list[tuple[bytes, S3Response] | Exception | None] = [None] * len(jobs)
    barrier = threading.Barrier(len(jobs))

    def write(j: int) -> None:
        key, body = jobs[j]
        conn = c.connection()
        try:
            conn.connect()
            barrier.wait(timeout=60)
            results[j] = (body, c.put(bucket, key, body, {"If-None-Match": "*"}, conn=conn))
        except Exception as e:  # reported below, with the others
            results[j] = e
        finally:
            conn.close()

    threads = [threading.Thread(target=write, args=(j,)) for j in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    errors = [(jobs[j][0], r) for j, r in enumerate(results) if not isinstance(r, tuple)]
    assert not errors, f"writers failed without an HTTP answer: {errors}"
    by_key: dict[str, list[tuple[bytes, S3Response]]] = {key: [] for key in keys}
    for (key, _), r in zip(jobs, results, strict=True):
        assert isinstance(r, tuple)
        by_key[key].append(r)
    return by_key


def test_if_none_match_under_concurrency_has_exactly_one_winner(s3_server: SeaweedS3) -> None:
    """WRITERS racing writers on each of KEYS fresh keys; the keys are raced KEYS_AT_ONCE at a time (the
    server serialises racing conditional writes to one key with a lock whose waiters retry after about a
    second, so one key after another would take a minute)."""
    c = s3_server.client()
    per_key: list[str] = []
    wins: Counter[int] = Counter()  # number of 2xx answers for one key -> number of keys
    bad: list[str] = []
    keys = [_key(f"_versions/{k}.manifest") for k in range(KEYS)]
    t0 = time.monotonic()
    for start in range(0, KEYS, KEYS_AT_ONCE):
        for key, results in _race(c, s3_server.bucket, keys[start : start + KEYS_AT_ONCE], WRITERS).items():
            k = keys.index(key)
            statuses = Counter(r.status for _, r in results)
            winners = [body for body, r in results if r.ok]
            stored = c.get(s3_server.bucket, key)
            wins[len(winners)] += 1
            line = f"key {k:2d}: {len(winners)} won, statuses {dict(sorted(statuses.items()))}"
            per_key.append(line)
            if len(winners) != 1:
                bad.append(f"{line}: {len(winners)} writers were told they created the object")
            if any(s not in (200, *REFUSED) for s in statuses):
                bad.append(f"{line}: answers other than 200/412/409")
            if stored.status != 200 or stored.body not in winners:
                bad.append(f"{line}: the stored body {stored.body[:60]!r} is not the winner's")
    summary = (
        f"{WRITERS} concurrent PUT If-None-Match: * per key, {KEYS} keys ({KEYS_AT_ONCE} at once), "
        f"{time.monotonic() - t0:.1f} s; keys by number of winners: {dict(sorted(wins.items()))}\n" + "\n".join(per_key)
    )
    print(summary)  # shown with -s / -rP: the measured result, also when it passes
    assert not bad, "conditional PUT is not atomic on this server:\n" + "\n".join(bad) + "\n\n" + summary


def test_wrong_credentials_are_refused(s3_server: SeaweedS3) -> None:
    bucket, key = s3_server.bucket, _key("secret")
    assert s3_server.client().put(bucket, key, b"kept").status == 200

    wrong_secret = s3_server.client(secret_key="not-the-secret-key")
    r = wrong_secret.get(bucket, key)
    assert r.status == 403 and r.error_code() == "SignatureDoesNotMatch", r
    r = wrong_secret.put(bucket, key, b"overwritten")
    assert r.status == 403, r

    unknown_key = s3_server.client(access_key="AKIANOBODYHERE000000")
    r = unknown_key.get(bucket, key)
    assert r.status == 403 and r.error_code() == "InvalidAccessKeyId", r
    assert unknown_key.delete(bucket, key).status == 403

    # Anonymous (unsigned) requests too.
    conn = s3_server.client().connection()
    try:
        conn.request("GET", f"/{bucket}/{key}")
        anon = conn.getresponse()
        anon.read()
        assert anon.status == 403
    finally:
        conn.close()

    assert s3_server.client().get(bucket, key).body == b"kept"


def test_the_client_lists_pages_and_deletes(s3_server: SeaweedS3) -> None:
    """The helper client itself: keys with spaces and '+' survive signing, listing follows continuation
    tokens, HEAD and DELETE work."""
    c, bucket = s3_server.client(), s3_server.bucket
    prefix = _key("")
    names = [f"{prefix}{i:02d} a+b=c.txt" for i in range(7)]
    for n in names:
        assert c.put(bucket, n, n.encode()).status == 200
    first_page = c.request("GET", f"/{bucket}", query={"list-type": "2", "prefix": prefix, "max-keys": "3"})
    assert b"<IsTruncated>true</IsTruncated>" in first_page.body and b"<NextContinuationToken>" in first_page.body
    assert c.list_objects_v2(bucket, prefix, max_keys=3) == sorted(names)
    assert c.head(bucket, names[0]).status == 200
    assert c.get(bucket, names[0]).body == names[0].encode()
    assert c.delete(bucket, names[0]).status == 204
    assert c.head(bucket, names[0]).status == 404
    assert c.list_objects_v2(bucket, prefix) == sorted(names[1:])


def test_env_names_the_server(s3_server: SeaweedS3) -> None:
    env = s3_server.env()
    assert env["AWS_ENDPOINT_URL"] == env["AWS_ENDPOINT"] == s3_server.endpoint
    assert env["AWS_ACCESS_KEY_ID"] == s3_server.access_key and env["AWS_SECRET_ACCESS_KEY"] == s3_server.secret_key
    assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == "us-east-1"
    assert env["AWS_ALLOW_HTTP"] == "true"
    assert s3_server.endpoint.startswith("http://127.0.0.1:")
    assert s3_server.startup_s < 30, f"weed server took {s3_server.startup_s:.1f} s to start"


def test_the_bucket_is_not_versioned(s3_server: SeaweedS3) -> None:
    """SeaweedFS's conditional writes are not reliable on versioned buckets: the fixture's bucket must not be one."""
    r = s3_server.client().request("GET", f"/{s3_server.bucket}", query={"versioning": ""})
    assert r.status == 200 and b"<Status>" not in r.body, r.body
