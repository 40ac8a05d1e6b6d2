import json,glob,sys,os
d=os.path.dirname(os.path.abspath(__file__))
which=sys.argv[1]; rowname=sys.argv[2]
rows=[]
i=1
while os.path.exists(f'{d}/{which}-r{i}-base.json'):
  r={}
  for who in ('base','branch'):
    j=json.load(open(f'{d}/{which}-r{i}-{who}.json'))
    row=[x for x in j['rows'] if x['name'].startswith(rowname)][0]
    r[who]=(j['loadAverage'][0] if isinstance(j['loadAverage'],list) else j['loadAverage'], row['cpuMsPerOp'], row['extra']['mainThreadCpuMsPerOp'], row['extra'].get('thread2CpuMsPerOp',0), row['ratio']['cpu'], row['ratio']['throughput'], j['commit'])
  rows.append(r); i+=1
def f(x,n=4): return f'{x:.{n}f}'
for k,r in enumerate(rows,1):
  b,a=r['base'],r['branch']
  print(f"| r{k} ({b[0]:.1f} / {a[0]:.1f}) | {f(b[1])} → {f(a[1])} | {f(b[2])} → {f(a[2])} | {f(b[3])} → {f(a[3])} | {b[4]:.2f}x → {a[4]:.2f}x | {b[5]:.2f}x → {a[5]:.2f}x |")
m=lambda who,idx: sum(r[who][idx] for r in rows)/len(rows)
print(f"| mean of {len(rows)} | {f(m('base',1))} → {f(m('branch',1))} | {f(m('base',2))} → {f(m('branch',2))} | {f(m('base',3))} → {f(m('branch',3))} | {m('base',4):.2f}x → {m('branch',4):.2f}x | {m('base',5):.2f}x → {m('branch',5):.2f}x |")
print('main lower in', sum(1 for r in rows if r['branch'][2] < r['base'][2]), 'of', len(rows), ' commits', rows[0]['base'][6], rows[0]['branch'][6])
