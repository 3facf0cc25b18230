"""Standard Webhooks signing: the spec's published test vector, rotation, tolerance, tampering."""

from __future__ import annotations

import pytest

from adapters.webhook import signing

# The test vector published with the Standard Webhooks specification and its reference libraries.
V = VECTOR = dict(secret="whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", id="msg_p5jXN8AQM9LWM0D4loKWxJek",
              timestamp=1614265330, body=b'{"test": 2432232314}',
              signature="v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")


def _hdrs(sig: str, ts: int = VECTOR["timestamp"], wid: str = VECTOR["id"]) -> dict[str, str]:
    return {"webhook-id": wid, "webhook-timestamp": str(ts), "webhook-signature": sig}


def test_sign_reproduces_the_spec_test_vector():
    assert signing.sign(V["secret"], V["id"], V["timestamp"], V["body"]) == V["signature"]


def test_verify_accepts_the_spec_test_vector_at_its_time():
    wid = signing.verify([VECTOR["secret"]], _hdrs(VECTOR["signature"]), VECTOR["body"], VECTOR["timestamp"])
    assert wid == VECTOR["id"]


def test_any_of_several_signatures_and_any_of_several_secrets_verifies():
    hdrs = _hdrs("v1,bm9wZQ== v2,abc " + VECTOR["signature"])
    assert signing.verify(["other-secret-0123456789", V["secret"]], hdrs, V["body"], V["timestamp"])


def test_headers_sign_with_every_secret_for_rotation():
    h = signing.headers(["old-secret-0123456789", VECTOR["secret"]], VECTOR["id"], VECTOR["timestamp"],
                        VECTOR["body"])
    assert h["webhook-signature"].split()[1] == VECTOR["signature"]
    assert signing.verify(["old-secret-0123456789"], h, VECTOR["body"], VECTOR["timestamp"])


@pytest.mark.parametrize("skew", [301, -301, 10_000])
def test_a_timestamp_outside_five_minutes_is_refused(skew):
    with pytest.raises(signing.SignatureError) as e:
        signing.verify([V["secret"]], _hdrs(V["signature"]), V["body"], V["timestamp"] + skew)
    assert e.value.code == "timestamp"


def test_a_timestamp_within_five_minutes_is_accepted():
    assert signing.verify([V["secret"]], _hdrs(V["signature"]), V["body"], V["timestamp"] + 299)


@pytest.mark.parametrize("change", ["body", "id", "timestamp", "secret", "scheme"])
def test_any_change_breaks_the_signature(change):
    body, hdrs, secret = VECTOR["body"], _hdrs(VECTOR["signature"]), VECTOR["secret"]
    if change == "body":
        body = b'{"test": 2432232315}'
    elif change == "id":
        hdrs["webhook-id"] = "msg_other"
    elif change == "timestamp":
        hdrs["webhook-timestamp"] = str(VECTOR["timestamp"] + 1)
    elif change == "secret":
        secret = "whsec_" + "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"
    else:
        hdrs["webhook-signature"] = VECTOR["signature"].replace("v1,", "v2,")
    with pytest.raises(signing.SignatureError) as e:
        signing.verify([secret], hdrs, body, VECTOR["timestamp"])
    assert e.value.code == "mismatch"


@pytest.mark.parametrize("missing", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_a_missing_header_is_refused(missing):
    hdrs = _hdrs(VECTOR["signature"])
    del hdrs[missing]
    with pytest.raises(signing.SignatureError) as e:
        signing.verify([VECTOR["secret"]], hdrs, VECTOR["body"], VECTOR["timestamp"])
    assert e.value.code == "missing"


def test_a_non_numeric_timestamp_is_refused():
    with pytest.raises(signing.SignatureError) as e:
        signing.verify([VECTOR["secret"]], _hdrs(VECTOR["signature"], ts="soon"), VECTOR["body"], 0)  # type: ignore[arg-type]
    assert e.value.code == "timestamp"


def test_a_plain_secret_is_its_bytes_and_a_whsec_secret_is_base64():
    assert signing.secret_key("plain") == b"plain"
    assert signing.secret_key("whsec_cGxhaW4=") == b"plain"
    with pytest.raises(ValueError):
        signing.secret_key("whsec_not base64!")
