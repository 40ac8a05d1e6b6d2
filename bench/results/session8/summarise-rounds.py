# python3 summarise-rounds.py gw|seq : per build, each round's USSD row (over 4 pairs) against its bare row
import json,glob,os,statistics as st,sys
tag=sys.argv[1]
here=os.path.dirname(os.path.abspath(__file__))
for w in ('base','new'):
    cpu=[];thr=[];ms=[];main=[];host=[]
    for f in sorted(glob.glob(f'{here}/{tag}-{w}-*.json')):
        j=json.load(open(f)); rows=j['rows']; u=rows[1]
        cpu.append(u['ratio']['cpu']); thr.append(u['ratio']['throughput']); ms.append(u['cpuMsPerOp'])
        main.append(u['extra'].get('mainThreadCpuMsPerOp')); host.append(u['extra'].get('thread2CpuMsPerOp'))
    print(tag,w,len(cpu),'cpu ratio',[round(x,2) for x in cpu],'median',round(st.median(cpu),2),'| thr',[round(x,2) for x in thr],'median',round(st.median(thr),2),'| ms/step median',round(st.median(ms),4),'main',round(st.median(main),4),'host',round(st.median(host),4))
