"""How well the fit's bounds on the strict top-4 ceiling do where the truth is known.

Input: a calibration.json collected on the simulated device (FORGE_TEST_SIMULATED_DEVICE=1):
each timing there is the shipped model's prediction (stored as predicted_us: the true time)
x (1 + 0.006 u), u uniform in [-1, 1), and a decided time is the median of the first timing and
its repeats. Per shape it prints: whether a perfect model's top 4 (by the true times) holds the
decided best (obs), the true ceiling (the measurement re-simulated from the true times, same
timing counts, 2000 trials), the Monte Carlo of noise::top4_ceiling (decided times taken as
true), an empirical-Bayes variant (not used), and at the end the split-half figure (ranking by
the odd-numbered timings, the best by the even-numbered ones; points timed once in both). Not a
measurement of anything on a GPU.
    python3 true_ceiling.py calibration.json [SCATTER]   (SCATTER: FORGE_TEST_SIMULATED_SCATTER,
                                                          default 0.006)
"""
import json, random, statistics, math, sys
d = json.load(open(sys.argv[1]))
rng = random.Random(1)
S = float(sys.argv[2]) if len(sys.argv) > 2 else 0.006
def timing(mu): return mu * (1 + S * (2 * rng.random() - 1))
def decided(p):
    ts = [p['measured']['median_us']] + p.get('repeats_us', [])
    return statistics.median(ts), len(ts)
TR = 2000
tot_true = tot_mc = tot_eb = tot_obs = 0
for sh in d['shapes']:
    pts = [p for p in sh['points'] if p['status'] == 'measured' and p['gate'] == 'pass']
    mu = [p['predicted_us'] for p in pts]
    dec = [decided(p) for p in pts]
    n = len(pts)
    top4_true = set(sorted(range(n), key=lambda i: mu[i])[:4])
    # observed: perfect model's top4 vs decided best
    best_obs = min(range(n), key=lambda i: dec[i][0])
    obs = best_obs in top4_true
    # true ceiling: re-simulate the measurement process from the truth
    hits = 0
    for _ in range(TR):
        x = [statistics.median([timing(mu[i]) for _ in range(dec[i][1])]) for i in range(n)]
        hits += min(range(n), key=lambda i: x[i]) in top4_true
    true_c = hits / TR
    # current MC estimator: truth := decided; gaussian noise with se from count (sigma = S/sqrt3, median se factor 1.2533)
    sig = S / math.sqrt(3)
    se = lambda k: 1.2533 * sig / math.sqrt(k)
    order = sorted(range(n), key=lambda i: dec[i][0]); t4 = set(order[:4])
    hits = 0
    for _ in range(TR):
        x = [math.log(dec[i][0]) + se(dec[i][1]) * rng.gauss(0, 1) for i in range(n)]
        hits += min(range(n), key=lambda i: x[i]) in t4
    mc = hits / TR
    # empirical-Bayes: shrink the confirmed points toward their mean by the estimated true spread
    conf = [i for i in range(n) if dec[i][1] > 1] or list(range(n))
    logs = [math.log(dec[i][0]) for i in conf]
    m = statistics.mean(logs); v_obs = statistics.pvariance(logs); v_noise = statistics.mean(se(dec[i][1])**2 for i in conf)
    lam = max(v_obs - v_noise, 0) / v_obs if v_obs > 0 else 0
    hits = 0
    for _ in range(TR):
        truth = []
        for i in range(n):
            l = math.log(dec[i][0]); s = se(dec[i][1])
            if i in conf:
                post_mean = m + lam * (l - m); post_sd = math.sqrt(lam) * s
            else:
                post_mean, post_sd = l, s
            truth.append(post_mean + post_sd * rng.gauss(0, 1))
        t4b = set(sorted(range(n), key=lambda i: truth[i])[:4])
        x = [truth[i] + se(dec[i][1]) * rng.gauss(0, 1) for i in range(n)]
        hits += min(range(n), key=lambda i: x[i]) in t4b
    eb = hits / TR
    tot_true += true_c; tot_mc += mc; tot_eb += eb; tot_obs += obs
    print(f"{sh['shape']['m']}x{sh['shape']['n']}x{sh['shape']['k']:<6} n={n:3d} conf={len(conf):2d} obs={int(obs)} true={true_c:.2f} mc={mc:.2f} eb={eb:.2f} lam={lam:.2f}")
k = len(d['shapes'])
print(f"mean: observed {tot_obs/k:.2f} true ceiling {tot_true/k:.2f} current MC {tot_mc/k:.2f} EB {tot_eb/k:.2f}")
# split-half: ranking by half A (timings 0,2,4), best by half B (1,3); unconfirmed points single timing in both (same value)
tot = 0
for sh in d['shapes']:
    pts = [p for p in sh['points'] if p['status'] == 'measured' and p['gate'] == 'pass']
    A=[];B=[]
    for p in pts:
        ts=[p['measured']['median_us']]+p.get('repeats_us',[])
        if len(ts)>=3:
            A.append(statistics.median(ts[0::2])); B.append(statistics.median(ts[1::2]))
        else:
            A.append(ts[0]); B.append(ts[0])
    n=len(pts)
    t4=set(sorted(range(n),key=lambda i:A[i])[:4])
    b=min(range(n),key=lambda i:B[i])
    tot+= b in t4
print("split-half (A ranks, B picks):", tot/len(d['shapes']))
