import json,glob,sys,re,statistics as st
tag=sys.argv[1]
for w in ('base','main'):
  for f in sorted(glob.glob(f'./{tag}-{w}-*.json')):
    d=json.load(open(f)); b,u=d['rows']; e=u['extra']
    txt=open(f.replace('.json','.txt')).read(); m=re.search(r'in each pair: CPU per step ([\d. ]+); steps per second ([\d. ]+)',txt)
    print(w, f.split('-')[-1][:-5], 'bare %.4f ussd %.4f main %.4f host %.4f rest %.4f | cpu x%.2f thr x%.2f | /s %d vs %d | pairs cpu [%s] thr [%s]'%(b['cpuMsPerOp'],u['cpuMsPerOp'],e['mainThreadCpuMsPerOp'],e['thread2CpuMsPerOp'],u['cpuMsPerOp']-e['mainThreadCpuMsPerOp']-e['thread2CpuMsPerOp'],u['ratio']['cpu'],u['ratio']['throughput'],u['throughput'],b['throughput'],m.group(1).strip(),m.group(2).strip()))
