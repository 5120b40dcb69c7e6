"""Korean grammar the synthetic history needs: particles that follow the sound of the word before them.

Korean particles attach to the noun (서버가, 서버를, 서버에서), and several have two forms chosen by whether
the word before ends in a consonant (받침): 펌프**가** but 압축기**가**, 변압기**를** but 배전반**을**,
L-12 라인**으로** but 창고**로**. Templates in `vocab.ko` write both forms as a marker (`{ma}이/가`,
`{rate}(으)로`) and `attach_particles` picks one from the character before the marker, read aloud:

* a Hangul syllable: its own final consonant (ㄹ counts apart, because (으)로 treats it like a vowel);
* a digit, as Koreans read the last digit of a number or code: 1 일, 3 삼, 6 육, 7 칠, 8 팔, 0 영/십/백/천
  end in a consonant; 2 이, 4 사, 5 오, 9 구 do not (MT-4471**이**, P-002**가**);
* a Latin letter: an acronym or code is read letter by letter (L 엘, M 엠, N 엔, R 알 end in a consonant:
  L-12 is a digit case, `SCADA` 에이, `PLC` 씨); a lower-case English word by its last sound (`seal leak`
  릭 → 이, `upgrade` → 가), a rule of thumb that is right for the words the mixed vocabulary uses;
* `%` is read 퍼센트 (no final consonant).
Everything else (spaces, punctuation) is skipped back over, as a reader would.
"""

from __future__ import annotations

import re

# Marker → (form after a final consonant, form after a vowel); (으)로 also takes the vowel form after ㄹ.
_PAIRS = {
    "이에요/예요": ("이에요", "예요"),
    "이네요/네요": ("이네요", "네요"),
    "이랑/랑": ("이랑", "랑"),
    "(으)로": ("으로", "로"),
    "이/가": ("이", "가"),
    "을/를": ("을", "를"),
    "은/는": ("은", "는"),
    "과/와": ("과", "와"),
}
_MARKER = re.compile("|".join(re.escape(m) for m in sorted(_PAIRS, key=len, reverse=True)))
_RIEUL = 8  # index of ㄹ among the 28 final-consonant slots of a Hangul syllable
_DIGIT_FINAL = {"0": "n", "1": "l", "2": "", "3": "n", "4": "", "5": "", "6": "n", "7": "l", "8": "l", "9": ""}
_LETTER_FINAL = {"L": "l", "M": "n", "N": "n", "R": "l"}  # letter names 엘 엠 엔 알; the rest end in a vowel
_WORD_FINAL = {"l": "l", **dict.fromkeys("bcdgkmnpt", "n")}  # English words: last letter heard as a consonant


def final_sound(text: str) -> str:
    """How `text` ends when read aloud: "" (a vowel), "l" (ㄹ) or "n" (any other final consonant)."""
    s = text.rstrip(" \t\n\"'’”)]")
    if not s:
        return ""
    ch = s[-1]
    if "가" <= ch <= "힣":
        jong = (ord(ch) - 0xAC00) % 28
        return "" if jong == 0 else "l" if jong == _RIEUL else "n"
    if ch in _DIGIT_FINAL:
        return _DIGIT_FINAL[ch]
    if ch.isascii() and ch.isalpha():
        word = re.search(r"[A-Za-z]+$", s)
        w = word.group(0) if word else ch
        if w.isupper() or len(w) == 1:
            return _LETTER_FINAL.get(ch.upper(), "")
        return _WORD_FINAL.get(ch.lower(), "")
    return ""  # "%" (퍼센트) and anything else: read as ending in a vowel


def attach_particles(text: str) -> str:
    """Replace every particle marker (`이/가`, `을/를`, `(으)로`, ...) by the form the word before it takes."""

    def pick(m: re.Match[str]) -> str:
        consonant, vowel = _PAIRS[m.group(0)]
        sound = final_sound(text[: m.start()])
        if m.group(0) == "(으)로":
            return consonant if sound == "n" else vowel
        return consonant if sound else vowel

    return _MARKER.sub(pick, text)
