# cmp.py OLD.txt NEW.txt: per row of the matrix, the median over its cells of the wheel side's
# new ÷ old (each cell's median), and each build's wheel ÷ runtime range, median and cells over 1.00.
import sys,re,statistics as st,collections
def load(p):
    d=collections.defaultdict(list)
    for l in open(p):
        m=re.match(r'BenchmarkMatrix/(\S+)/impl=(\w+)-\d+\s+\d+\s+([\d.]+) ns/op',l)
        if m: d[(m.group(1),m.group(2))].append(float(m.group(3)))
    return d
o,n=load(sys.argv[1]),load(sys.argv[2])
rows=collections.defaultdict(list); ratio_old=collections.defaultdict(list); ratio_new=collections.defaultdict(list)
for (cell,impl),v in n.items():
    if impl!='wheel': continue
    key=re.sub(r'wheel=\w+/','',cell); key=re.sub(r'/d=\w+','',key)
    rows[key].append(st.median(v)/st.median(o[(cell,impl)]))
    rn=st.median(v)/st.median(n[(cell,'runtime')]); ro=st.median(o[(cell,'wheel')])/st.median(o[(cell,'runtime')])
    ratio_old[key].append(ro); ratio_new[key].append(rn)
for k in sorted(rows):
    r=rows[k]
    print(f"{k:40s} new/old median {st.median(r):.3f} lower {sum(x<1 for x in r)}/{len(r)}   wheel/runtime old {min(ratio_old[k]):.2f}-{max(ratio_old[k]):.2f} med {st.median(ratio_old[k]):.2f} >1: {sum(x>1 for x in ratio_old[k])}  new {min(ratio_new[k]):.2f}-{max(ratio_new[k]):.2f} med {st.median(ratio_new[k]):.2f} >1: {sum(x>1 for x in ratio_new[k])}")
