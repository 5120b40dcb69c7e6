"""The mixed Korean/English history: Korean sentences with English product names, jargon and codes, the way
Korean engineers actually type (`Grundfos 펌프에서 seal leak`, `SAP 정산 export`, `Grafana 대시보드`).

Everything not redefined here is `vocab.ko`'s. The topics are where the languages mix: a fact is stated with
the English term or a product name, and its question paraphrases it in Korean around the same English head
word, as the English questions keep theirs (`seal leak` said, `seal이 새는 문제` asked); a few share nothing
(`leak test` said, `기밀 테스트` asked), so reading both languages counts. Keywords stay as people search.
"""

from .ko import *  # noqa: F403  (the Korean lists this module does not redefine)

MACHINE_TYPES = {
    "P": "Grundfos 펌프", "K": "Atlas Copco 압축기", "C": "컨베이어", "F": "배기팬",
    "M": "믹서", "T": "ABB 변압기", "G": "Cummins 발전기", "B": "보일러",
}

# (fact phrase, question paraphrase, keyword, machine prefixes it can happen to)
SYMPTOMS = (
    ("seal leak", "seal이 새는 문제", "seal leak", "PMKB"),
    ("vibration alarm 반복", "계속 울리는 vibration 경보", "vibration alarm", "PKFMGC"),
    ("bearing overheat", "bearing이 뜨거워지는 문제", "bearing", "PKFCMG"),
    ("oil leak", "oil이 새는 문제", "oil leak", "KTGB"),
    ("VFD overcurrent trip", "VFD 과전류 차단", "VFD trip", "PKCFM"),
    ("discharge pressure drop", "토출 pressure가 떨어지는 현상", "pressure drop", "PKB"),
    ("grinding noise", "grinding 소리", "grinding noise", "PKCFMG"),
    ("restart fail", "멈춘 뒤 restart가 안 되는 문제", "restart fail", "KCGBM"),
    ("온도 sensor drift", "온도 sensor 값이 틀어지는 문제", "sensor drift", "TBKGF"),
    ("belt slip", "belt가 헛도는 문제", "belt slip", "CF"),
    ("coupling misalignment", "정렬이 틀어진 coupling", "coupling", "PKFGM"),
    ("insulation fault alarm", "insulation 이상 알람", "insulation fault", "TG"),
)

# (fact phrase, question paraphrase, keyword)
CHECKS = (
    ("final QC", "출하 전 final 점검", "final QC"),
    ("IQC 수입 검사", "입고 부품 확인", "IQC"),
    ("leak test", "기밀 테스트", "leak test"),
    ("CMM 치수 검사", "CMM 측정", "CMM 치수"),
    ("visual inspection", "visual 점검", "visual"),
    ("torque audit", "torque 확인", "torque"),
    ("weld inspection", "weld 부위 점검", "weld"),
    ("cross-cut adhesion test", "도막 adhesion 테스트", "adhesion"),
    ("EOL test", "end-of-line 테스트", "EOL test"),
    ("FAI 초도품 검사", "FAI 초도 생산품 확인", "FAI 초도품"),
    ("X-ray 검사", "방사선 투과 검사", "X-ray"),
    ("seal integrity check", "seal integrity 테스트", "seal integrity"),
)

# (fact phrase, question paraphrase, keyword)
JOBS = (
    ("SAP 야간 정산 export", "밤사이 도는 SAP 정산 추출", "SAP export"),
    ("AMI 검침 import", "AMI 검침 데이터 적재", "AMI import"),
    ("shift handover report", "교대 때 나가는 handover 보고서", "handover report"),
    ("PI historian backup", "historian 데이터 백업본", "historian backup"),
    ("spare parts reorder sync", "spare parts 발주 연동", "reorder sync"),
    ("Maximo 정비 일정 rebuild", "Maximo 정비 계획 다시 만들기", "Maximo rebuild"),
    ("Grafana 에너지 rollup", "Grafana 에너지 소비 합산", "energy rollup"),
    ("MES 품질 데이터 upload", "MES에 QC 결과 올리기", "MES upload"),
    ("invoice reconciliation batch", "invoice 맞춰 보기", "invoice reconciliation"),
    ("CMMS work order sync", "CMMS 작업지시 연동", "work order sync"),
    ("calibration report", "계측기 calibration 리포트", "calibration"),
    ("Workday 근태 export", "Workday 급여용 근무시간 추출", "Workday export"),
)

# (fact phrase, question paraphrase, keyword)
PROJECTS = (
    ("switchgear upgrade", "switchgear 교체 공사", "switchgear"),
    ("roof repair", "roof 방수 공사", "roof repair"),
    ("SCADA migration", "새 SCADA로 옮기는 작업", "SCADA migration"),
    ("cooling tower retrofit", "cooling tower 개선 공사", "cooling tower"),
    ("control room refit", "control room 개보수", "control room"),
    ("fire suppression upgrade", "fire suppression 설비 공사", "fire suppression"),
    ("backup generator 교체", "예비 generator 바꾸는 건", "backup generator"),
    ("LED lighting retrofit", "조명을 LED로 바꾸는 공사", "LED lighting"),
    ("compressed air ring main", "compressed air 배관 공사", "ring main"),
    ("perimeter fence 교체", "새 perimeter 울타리 설치", "fence"),
    ("dosing system upgrade", "약품 dosing 장치 업그레이드", "dosing"),
    ("Toyota 지게차 fleet renewal", "지게차 fleet 신규 도입", "forklift fleet"),
)

FOODS = ("Subway 샌드위치", "돈가스", "편의점 삼각김밥", "회사 앞 칼국수", "어제 남은 떡볶이", "제육볶음 정식",
         "순두부찌개", "Starbucks 샐러드", "비빔밥")

# Chatter that names the tools people use at work.
CHATTER_SITE = ("{site}에서 새벽 5시에 잠깐 정전이 있었는데 Slack 알림 보니까 다 알아서 복구됐어요.",
                "{site}의 {job} job이 밤새 또 fail 났어요. 그래도 rerun한 {bld}은/는 green이에요.",
                "{site}의 {proj}이/가 또 밀리고 있어요. 업체 말로는 2주 더 걸린대요.",
                "금요일에는 {c2} 씨가 {site}을/를 맡아 주기로 했어요. 거기 반장님이 휴가라서요.")
CHATTER_REPLY = ("바쁜 아침이네요. {ma_id}이/가 계속 말썽이면 시간을 Excel에 적어 두세요. 패턴이 보일 수도 있어요.",
                 "{ma_id} 건 알겠습니다. 잊지 않게 {c1} 씨한테 Teams로 짧게 메모를 보내 드릴까요?",
                 "한꺼번에 많네요. {site} 쪽에서 제가 도와드릴 건 있어요?",
                 "알겠습니다. 이번 주 open item 요약이 필요하면 말씀하세요.")
FACT_TAILS = ("{c1} 씨가 야간조에서 Jira에 올린 거예요.", "점심 먹고 확인해 볼게요.", "아무튼 다시 커피 마시러 갑니다.",
              "{c2} 씨가 챙겨 달라고 했어요.", "", "")

# Questions: Korean, using the Korean paraphrase of an English-named topic; short ones use the keyword.
SHORT_Q = {
    "ticket": "{mid} {symkw} 티켓",
    "rate": "{line} {checkkw} 불량률",
    "owner": "{site} {jobkw} 담당자",
    "decision": "{site} {projkw} 결정",
}
