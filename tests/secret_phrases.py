"""Secrets as people write them, and look-alikes that are not secrets: the redactor's hand-written
examples, written before the prose patterns. The patterns were tuned on TUNE (which grew by the
look-alikes other text showed); no pattern was changed for a HELD_OUT phrase (docs/managing.md
has the figures, benchmarks/redaction.py scores both halves). A positive is (text, the secret in
it): the redactor must turn exactly that secret into the marker and leave the rest as written. A
negative must come out unchanged."""

from __future__ import annotations

TUNE_POSITIVE = [
    ("my bank PIN is 4921", "4921"),
    ('the wifi passphrase is "blue giraffe dancing"', "blue giraffe dancing"),
    ("password hunter22", "hunter22"),
    ("The OTP is 839201, it expires soon", "839201"),
    ("my card's CVV is 847", "847"),
    ("security code: 9981", "9981"),
    ("pin code is 2580", "2580"),
    ("the API key is abc123XYZ789", "abc123XYZ789"),
    ("my password was Summer2023!", "Summer2023!"),
    ('password = "correct horse battery staple"', "correct horse battery staple"),
    ("the password for the router is admin123", "admin123"),
    ("The one-time passcode was 123456.", "123456"),
    ("wifi: HomeNet, password hunter22, ask Tom", "hunter22"),
    ("I changed my password to Tr0ub4dor", "Tr0ub4dor"),
    ("the door code is 4471", "4471"),
    ("verification code 552211", "552211"),
    ("密码是hunter22", "hunter22"),
    ("我的银行卡密码是 852963", "852963"),
    ("支付密码：147258", "147258"),
    ("口令为 OpenSesame9", "OpenSesame9"),
    ("验证码 482913", "482913"),
    ("PIN码是 4921", "4921"),
    ("邮箱密码是「蓝色长颈鹿」", "蓝色长颈鹿"),
    ("密碼是 hunter22", "hunter22"),
    ("短信验证码：889900，五分钟内有效", "889900"),
    ("门禁密码 0852", "0852"),
    # identity and card numbers (text/identifiers.py), each valid by its checks: published specimens
    # where there are some (078-05-1120, the SSN printed on a wallet insert in 1938; card issuers'
    # test numbers; the examples of the standards), written with the patterns
    ("My SSN is 078-05-1120", "078-05-1120"),
    ("ssn: 219 09 9999", "219 09 9999"),
    ("social security number 123456789", "123456789"),
    ("card 4111 1111 1111 1111 exp 12/27", "4111 1111 1111 1111"),
    ("Amex 3782 822463 10005", "3782 822463 10005"),
    ("身份证号：11010519491231002X", "11010519491231002X"),
    ("身分證字號 A123456789", "A123456789"),
    ("HKID A123456(3)", "A123456(3)"),
    ("주민등록번호 850101-1234566", "850101-1234566"),
    ("NI number: AB 12 34 56 C", "AB 12 34 56 C"),
    ("my SIN is 046 454 286", "046 454 286"),
    ("Aadhaar 2345 6789 0124", "2345 6789 0124"),
    ("CPF 123.456.789-09", "123.456.789-09"),
    ("DNI 12345678Z", "12345678Z"),
    ("codice fiscale RSSMRA85T10A562S", "RSSMRA85T10A562S"),
]

TUNE_NEGATIVE = [
    "password reset flow",
    "the PIN field",
    "verification code was sent",
    "change your password regularly",
    "The password is incorrect.",
    "I forgot my password again",
    "the PIN is on the back of the card",
    "The secret is to add salt early.",
    "Use a passphrase of at least 12 words.",
    "the CVV is on the back",
    "connect pin 13 to ground",
    "the password policy requires 12 characters",
    "The secret service arrived in 1865.",
    "token 2 of the sequence",
    "Status code 404 means not found.",
    "我忘了密码",
    "密码学是一门古老的学科",
    "验证码已发送到你的手机",
    "密码错误，请重试",
    "密码是我的生日",
    "动态码有效期为5分钟",
    "密碼學課程在週三",
    "他把密码告诉了我",
    # added while tuning, from text the first patterns took
    "password: 8-16 characters, one of them a digit",
    "密码为8-16位，须包含字母和数字",
    "allow zero-length secret KeyObject",
    "or pin 'mcp<2' to keep running v1 code",
    "Utilities to get a password and/or the current user name",
    "Enter passphrase for key '/home/me/.ssh/id_rsa':",
    "passphrase: &#x3C;string>",
    "ssh-keys/id_rsa-passphrase */src/*/ssh-keys/id_rsa.pub",
    "This user name must appear in the password\n# database file",
    # numbers shaped like identity or card numbers that are not: a phone number, a date, an ISBN,
    # an order number, a drug's code, the same shape with a failing check or a range never issued
    "call 415-555-0132 after five",
    "meeting on 2023-01-15 at 10:00",
    "ISBN 978-0-306-40615-7",
    "the form shows 000-12-3456",
    "666-12-3456 is not issued",
    "card 4111 1111 1111 1112",
    "the cannabinoid antagonist SR141716A (0, 1, and 3 mg/kg)",
    "HMRC's specimen QQ 12 34 56 C",
    "móvil 612 345 678",
    "110105194912310021",
    "A123456788",
    "12345678A",
    "order number 123456789",
    "1234 5678 9010",
]

HELD_OUT_POSITIVE = [
    ("My PIN: 0000", "0000"),
    ("one-time code: 554433", "554433"),
    ("CVV 123", "123"),
    ("The verification code is 772819", "772819"),
    ("passcode 7788", "7788"),
    ("the secret is 'open sesame 42'", "open sesame 42"),
    ("my gmail password is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("Password: 'my dog rex'", "my dog rex"),
    ("the PIN for my Visa card is 4921", "4921"),
    ("my ATM pin is 1234", "1234"),
    ("API key: sd8f7g6h5j4k", "sd8f7g6h5j4k"),
    ("Your confirmation code is K7Q2ZX.", "K7Q2ZX"),
    ("laptop password is blueSky88 - don't share", "blueSky88"),
    ("the gate code was 2468#", "2468#"),
    ("验证码是：662311", "662311"),
    ("WiFi密码：blue_giraffe_88", "blue_giraffe_88"),
    ("动态码为 339900", "339900"),
    ("驗證碼：123456", "123456"),
    ("我的提款密碼為 5566", "5566"),
    ("登录密码=Abc12345", "Abc12345"),
    ("密码: abc123", "abc123"),
    ("手机解锁密码是 2580", "2580"),
    ("口令是“芝麻开门”", "芝麻开门"),
    ("网盘提取码：x7k9", "x7k9"),
    ("他说密码是Qwerty2024，别告诉别人", "Qwerty2024"),
    # identity and card numbers (see the tuning half)
    ("her social security no. is 123-45-6789.", "123-45-6789"),
    ("SSN 219099999", "219099999"),
    ("paid with 5555-5555-5555-4444", "5555-5555-5555-4444"),
    ("test card 6011111111111117", "6011111111111117"),
    ("我的身份证号码是440304199003072830", "440304199003072830"),
    ("ID F222333444 on the form", "F222333444"),
    ("香港身份證 Z683365(A)", "Z683365(A)"),
    ("RRN 920315-2345674", "920315-2345674"),
    ("national insurance number AB123456C", "AB123456C"),
    ("Social Insurance Number: 130-692-544", "130-692-544"),
    ("आधार 4973-1220-1855", "4973-1220-1855"),
    ("CPF: 111.444.777-35", "111.444.777-35"),
    ("NIE X1234567L", "X1234567L"),
    ("CF: BNCMRA90E41H501O", "BNCMRA90E41H501O"),
    ("JCB 3530 1113 3330 0000", "3530 1113 3330 0000"),
]

HELD_OUT_NEGATIVE = [
    "Your password was changed yesterday.",
    "Enter your PIN at the terminal.",
    "The secret is out.",
    "The API key is stored in the vault.",
    "password manager settings",
    "OTP delivery takes 30 seconds",
    "the verification code expires in 10 minutes",
    "security code review in 2023",
    "password is at least 8 characters",
    "the PIN is 4 digits long",
    "PIN length: 6 digits",
    "Secret: The Untold Story",
    "the area code is 415",
    "a token bucket of 50 requests",
    "请修改你的密码",
    "口令为空",
    "密码长度至少8位",
    "设置支付密码",
    "验证码为6位数字",
    "密码是什么？",
    "银行卡密码忘了怎么办",
    "公钥密码体制如RSA",
    "密碼學與資訊安全",
    # numbers shaped like identity or card numbers that are not (see the tuning half)
    "(212) 555-0187 is the front desk",
    "+1 212 555 0187",
    "ISBN 0-306-40615-2",
    "born 15.01.1985",
    "the SSN field was 912-34-5678",
    "123-45-0000",
    "CPF 123.456.789-00",
    "RSSMRA85T10A562T",
    "A123456(4)",
    "850101-1234567",
    "tracking 9400 1000 0000 0000 0000 00",
    "IMEI 352099001761481",
    "Amazon order 112-1234567-1234567",
    "coordinates 40.7128, -74.0060",
    "110105194913310021",
]

# One note holding prose secrets, for the tests that write it through a real path (MCP, the web
# UI, an import, the chat runtime, a transcript) and then look for each secret on disk and in the
# index.
NOTE_SECRETS = [
    ("my bank PIN is 4921", "4921"),
    ('the wifi passphrase is "blue giraffe dancing"', "blue giraffe dancing"),
    ("password hunter22", "hunter22"),
    ("银行卡密码是 852963", "852963"),
    ("验证码：482913", "482913"),
]
NOTE = "\n".join(f"- {text}" for text, _ in NOTE_SECRETS)


def assert_no_secret(mem, root) -> None:
    """No Markdown file under ``root`` (its name or its text) and nothing ``mem`` indexed holds a
    secret of NOTE, and a search for each finds nothing holding it."""
    import json
    import re

    for path in root.rglob("*.md"):
        text, name = path.read_text("utf-8"), str(path.relative_to(root)).lower()
        for _, secret in NOTE_SECRETS:
            assert secret not in text, (path, text)
            assert re.sub(r"\W+", "-", secret.lower()) not in name, path
    chunks = "\n".join(r[0] for r in mem.backend.store.conn.execute("SELECT text FROM chunks"))
    fts = "\n".join(r[0] for r in mem.backend.store.conn.execute("SELECT text FROM chunks_fts"))
    assert chunks, "nothing was indexed: the test would prove nothing"
    for _, secret in NOTE_SECRETS:
        assert secret not in chunks and secret not in fts, secret
        found = mem.tools.memory_search(secret, min_score=0)
        assert "error" not in found, found
        assert secret not in json.dumps(found, ensure_ascii=False), found
