"""Two corpora for the redactor: secrets that must never survive, and ordinary text that must stay untouched.

Each secret is ``(name, template, secret)``: ``template.format(secret)`` is how it
appears in the wild, and no piece of ``secret`` (split on white space) may
survive redaction. ``benchmarks/bench_redact.py`` measures detectors against both.
"""
from __future__ import annotations

import re

SECRETS: list[tuple[str, str, str]] = [
    ("OpenAI project key", "{}", "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJ"),
    ("OpenAI legacy key", "{}", "sk-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJq7xT2"),
    ("Anthropic key", "{}", "sk-ant-api03-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gS-Aa9_Bb8Cc7Dd6AA"),
    ("OpenAI key glued to a name", "OPENAI_API_KEY_{}", "sk-proj-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3BlbkFJ"),
    ("Anthropic key glued to a name", "key_{}", "sk-ant-api03-Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gS-Aa9_Bb8Cc7Dd6AA"),
    ("Google API key", "{}", "AIzaSyQ7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSa1"),
    ("AWS access key id", "{}", "AKIAQ7XT2MV9PL4KR8WZ"),
    ("AWS temporary key id", "{}", "ASIAQ7XT2MV9PL4KR8WZ"),
    ("AWS secret key (ini)", "aws_secret_access_key = {}", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYQ7xT2mV9pL"),
    ("AWS secret key (env)", "AWS_SECRET_ACCESS_KEY={}", "Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSa/T3bk+Ab"),
    ("GitHub classic token", "{}", "ghp_Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk"),
    ("GitHub OAuth token", "{}", "gho_Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk"),
    ("GitHub fine-grained token", "{}",
     "github_pat_11AQ7XT2M0Q7xT2mV9pL4k_R8wZ1nB6cY3hJ5fD0gSaT3bkQ7xT2mV9pL4kR8wZ1nB6cY3hJ5f"),
    ("Slack bot token", "{}", "xoxb-123456789012-1234567890123-Q7xT2mV9pL4kR8wZ1nB6cY3h"),
    ("Slack app token", "{}", "xapp-1-A0Q7XT2MV9P-1234567890123-q7xt2mv9pl4kr8wz1nb6cy3hj5fd0gsa"),
    ("GitLab token", "{}", "glpat-Q7xT2mV9pL4kR8wZ1nB6"),
    ("Hugging Face token", "{}", "hf_Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT"),
    ("npm token", "{}", "npm_Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk"),
    ("Stripe secret key", "{}", "sk_live_51Q7xT2mV9pL4kR8wZ1nB6cY3h"),
    ("Stripe restricted key", "{}", "rk_live_51Q7xT2mV9pL4kR8wZ1nB6cY3h"),
    ("SendGrid key", "{}", "SG.Q7xT2mV9pL4kR8wZ1nB6c.Y3hJ5fD0gSaT3bkQ7xT2mV9pL4kR8wZ1nB6cY3hJ5f"),
    ("Azure storage connection string",
     "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net",
     "Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSa+/T3bk=="),
    ("Azure Service Bus connection string",
     "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={}",
     "Y3hJ5fD0gSaT3bkQ7xT2mV9pL4kR8wZ1nB6c="),
    ("JSON Web Token", "{}",
     "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJRN3hUMm1WOSJ9.Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk_x-y"),
    ("password in a percent-encoded query", "GET /login?next=%2Fhome%3Fuser%3Dann%26password%3D{}&x=1",
     "Q7xT2mV9pL4kR8wZ1nB6"),
    ("one-time password in prose", "Your OTP: {} (valid 5 minutes)", "482913"),
    ("card PIN assignment", "card_pin=1234 pin={}", "8841"),
    ("token scheme", "curl -H 'X-Forward: token {}' https://api.example.com", "Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSa"),
    ("JSON Web Token glued to a name", "SESSION_JWT_{}",
     "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJRN3hUMm1WOSJ9.Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk_x-y"),
    ("RSA private key", "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
     "MIIEpAIBAAKCAQEAQ7xT2mV9pL4kR8wZ1nB6cY3h\nJ5fD0gSaT3bkQ7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0"),
    ("PKCS#8 private key", "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----",
     "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nQ7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk=="),
    ("OpenSSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ7xT2mV9pL4kR8wZ1\nnB6cY3hJ5fD0gSaT3bkQ7xT2mV9pL4kR8wZ1nB6cY3h"),
    ("password in an https URL", "https://deploy:{}@git.example.com/repo.git", "Q7xT2mV9pL4k"),
    ("Postgres DSN", "postgres://app:{}@db.internal:5432/shop", "hunter2-Q7xT2m"),
    ("MySQL DSN", "mysql://root:{}@127.0.0.1:3306/db", "s3cr3t!Q7xT"),
    ("Redis DSN without a user", "redis://:{}@cache:6379/0", "R3d1sQ7xT2mV"),
    ("api_key query parameter", "https://api.example.com/v1/x?api_key={}&page=2", "Q7xT2mV9pL4kR8"),
    ("token query parameter", "https://api.example.com/v1/x?page=2&token={}", "tQ7xT2mV9pL4kR8"),
    ("access_token query parameter", "https://example.com/cb?access_token={}", "ya29.Q7xT2mV9pL4kR8wZ1"),
    ("Cookie header", "Cookie: session={}; theme=dark", "Q7xT2mV9pL4kR8wZ1nB6"),
    ("Set-Cookie header", "Set-Cookie: sid={}; Path=/; HttpOnly", "sQ7xT2mV9pL4kR8wZ"),
    ("password assignment", "password={}", "hunter2Xq!9"),
    ("YAML password", "database:\n  host: db\n  password: {}\n  user: app", "Tr0ub4dor&3x"),
    ("passphrase", "passphrase: {}", "correct-horse-battery-9"),
    ("private_key assignment", "private_key={}", "pkQ7xT2mV9pL4kR8"),
    ("pass assignment", "user=app pass={}", "p4ssQ7xT2m"),
    ("client_secret assignment", "client_secret={}", "csQ7xT2mV9pL4kR8wZ1"),
    ("escaped OpenAI key", "\\u0073k-proj-{}", "Q7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSa"),
    ("Bearer token ending in symbols", "Authorization: Bearer {}", "abcdefgh!Q7x~9zZ"),
    ("Basic credentials", "Authorization: Basic {}", "ZGVwbG95OlE3eFQybVY5cEw0aw=="),
    # formats the maintained rule sets list (issue 18): each leaked before gitleaks' rules were read
    ("Twilio API key", "TWILIO_KEY {}", "SK3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e"),
    ("Databricks token", "{}", "dapi3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e"),
    ("Mailgun key", "mailgun: {}", "key-3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e"),
    ("Shopify access token", "{}", "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"),
    ("DigitalOcean token", "{}", "dop_v1_3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e"),
    ("PyPI upload token", "{}", "pypi-AgEIcHlwaS5vcmcCJDk3ZjBhYzJlLTdiMTQtNGQ2YS04ZjA1LWM5ZTJiN2QxYTRjNgACKlszLCJhMWIyYzNkNCJdAAAGIK"),
    ("Discord bot token", "bot token {}", "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
    ("Heroku API key", "HEROKU_API_KEY={}", "3f9a0c2e-7b14-4d6a-8f05-c9e2b7d1a4c6"),
    ("Heroku key in prose", "heroku key: {}", "3f9a0c2e-7b14-4d6a-8f05-c9e2b7d1a4c6"),
    ("Heroku v2 key", "{}", "HRKU-AA3f9a0c2e7b14d6a8f05c9e2b7d1a4c6e3f9a0c2e7b14d6a8f05c9e2b7d"),
    ("Slack webhook URL", "{}", "https://hooks.slack.com/services/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m"),
    ("Bearer token after a tab", "Authorization:\tBearer\t{}".replace("\\t", "\t"), "Q7xT2mV9pL4kR8wZ1nB6cY3h"),
    ("AWS secret key in prose", "The AWS secret key is {} for now", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYQ7xT2mV9pL"),
    ("Cookie in a JSON header list", '[["Accept", "*/*"], ["Cookie", "{}"]]', "session=Q7xT2mV9pL4kR8wZ1nB6"),
    ("Cookie in a HAR header", '{{"name": "Cookie", "value": "{}"}}', "sid=Q7xT2mV9pL4kR8wZ1nB6"),
]

BENIGN: list[str] = [
    "o-1", "o-2 belongs to tenant shop-b, caller is shop-a", "call-1", "call_r1", "fc_1", "resp_2", "msg_1",
    "550e8400-e29b-41d4-a716-446655440000", "2024-05-01T10:00:00.123Z", "2024-05-01", "1714557600",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  # sha256
    "da39a3ee5e6b4b0d3255bfef95601890afd80709",  # sha1
    "d41d8cd98f00b204e9800998ecf8427e",  # md5
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "https://example.com/orders?id=o-1&page=2", "https://api.openai.com/v1/responses",
    "http://127.0.0.1:8080/v1/chat/completions", "https://example.com:8443/path/to/thing#section",
    "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse",
    "the password is required", "Enter your password to continue.", "the token budget was fine",
    "max tokens: 500", "input_tokens=12 output_tokens=20", "usage: 60 input tokens",
    "Missing bearer token", "Basic authentication failed", "Bearer authentication is required",
    "reset your password at the settings page", "tokens used: 80", "passed", "3 tests passed, 0 failed",
    "passenger manifest", "compass heading 270", "bypass=false", "skip-connection", "task-1234567890123456789",
    "risk-assessment-framework-2024", "kiosk-mode-enabled-for-store-1234", "desk-booking-system-v2-final",
    "hf_hub_download", "npm_config_cache", "sg.example.com", "AccountName=acme;EndpointSuffix=core.windows.net",
    "-----BEGIN PUBLIC KEY-----", "-----BEGIN CERTIFICATE-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOq7xT2mV9pL4kR8wZ1nB6cY3hJ5fD0gSaT3bk user@host",
    "pk_live_51Q7xT2mV9pL4kR8wZ1nB6cY3h is a publishable key",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "order_id: o-1", "status: delivered", "tenant: shop-a", "Retry-After: 2", "x-request-id: req_8f2a9c0d1e",
    "gpt-4.1-mini", "claude-3-5-sonnet-20241022", "gemini-2.0-flash", "192.168.0.1", "::1",
    '{"order_id": "o-1", "status": "delivered", "source": "read_order"}',
    '{"tokens": 12, "passed": true, "max_output_tokens": 500}',
    "permission denied: o-2 belongs to tenant shop-b", "HTTP 429: rate limited, retry after 2 s",
    "The Asian markets opened higher", "Alaska Airlines", "eyes on the skyline", "Set the cookie banner to dark",
    "user@example.com", "mailto:support@example.com", "C:\\Users\\app\\config.yaml",
    "Retry in 2s. Request id: 9b2c-77aa", "See https://docs.example.com/auth#tokens for how to get a token",
]


def pieces(secret: str) -> list[str]:
    """The parts of a secret that must not survive (it may span lines, as a private key does)."""
    return [p for p in re.split(r"\s+", secret) if p]


def instances() -> list[tuple[str, str, str]]:
    """``(name, text, secret)`` for every corpus entry."""
    return [(name, template.format(secret), secret) for name, template, secret in SECRETS]
