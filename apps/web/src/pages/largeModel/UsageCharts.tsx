import { useEffect, useRef } from 'react';
import * as echarts from 'echarts/core';
import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import type { ComposeOption } from 'echarts/core';
import type { BarSeriesOption, LineSeriesOption } from 'echarts/charts';
import type { GridComponentOption, LegendComponentOption, TooltipComponentOption } from 'echarts/components';
import { formatMoney } from '@suanli/domain/format';
import { MONEY_UNITS_PER_YUAN } from '@suanli/domain/money';
import { Card } from 'antd';
import { useT } from '../../locales/i18n.ts';
import type { UsageGroup } from './helpers.ts';
import styles from './llm.module.css';

echarts.use([BarChart, LineChart, GridComponent, LegendComponent, TooltipComponent, CanvasRenderer]);

type Option = ComposeOption<BarSeriesOption | LineSeriesOption | GridComponentOption | LegendComponentOption | TooltipComponentOption>;

/** One chart: a canvas for sighted readers, described by its label; the tables carry the figures. */
function EChart({ option, label, testId }: { option: Option; label: string; testId: string }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  useEffect(() => {
    if (!box.current) return;
    const c = echarts.init(box.current, undefined, { renderer: 'canvas' });
    chart.current = c;
    const ro = new ResizeObserver(() => c.resize());
    ro.observe(box.current);
    return () => {
      ro.disconnect();
      c.dispose();
      chart.current = null;
    };
  }, []);
  useEffect(() => {
    chart.current?.setOption(option, true);
  }, [option]);
  return <div ref={box} className={styles.chartBox} role="img" aria-label={label} data-testid={testId} />;
}

const yuan = (units: number) => units / MONEY_UNITS_PER_YUAN;
const PALETTE = ['#1677ff', '#13a8a8', '#fa8c16', '#722ed1', '#eb2f96', '#52c41a'];

/** The usage page's charts (a separate chunk: echarts loads only with this page). */
export default function UsageCharts({ days, byModel, byKey }: { days: UsageGroup[]; byModel: UsageGroup[]; byKey: UsageGroup[] }) {
  const { t } = useT();
  const x = days.map((d) => d.label.slice(5));
  const grid = { left: 56, right: 56, top: 40, bottom: 28 };
  const tokens: Option = {
    color: PALETTE,
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid,
    xAxis: { type: 'category', data: x },
    yAxis: { type: 'value' },
    series: [
      { name: t('llm.usage.promptTokens'), type: 'bar', stack: 'tokens', data: days.map((d) => d.promptTokens) },
      { name: t('llm.usage.completionTokens'), type: 'bar', stack: 'tokens', data: days.map((d) => d.completionTokens) },
    ],
  };
  const requestsCost: Option = {
    color: PALETTE,
    tooltip: { trigger: 'axis', valueFormatter: (v) => String(v) },
    legend: { top: 0 },
    grid,
    xAxis: { type: 'category', data: x },
    yAxis: [
      { type: 'value', name: t('llm.usage.requests'), minInterval: 1 },
      { type: 'value', name: '¥', axisLabel: { formatter: (v: number) => `¥${v}` } },
    ],
    series: [
      { name: t('llm.usage.requests'), type: 'line', data: days.map((d) => d.requests) },
      { name: t('llm.usage.cost'), type: 'line', yAxisIndex: 1, data: days.map((d) => yuan(d.cost)), tooltip: { valueFormatter: (v) => formatMoney(Math.round(Number(v) * MONEY_UNITS_PER_YUAN)) } },
    ],
  };
  const breakdown = (groups: UsageGroup[]): Option => {
    const top = groups.slice(0, 10).reverse();
    return {
      color: PALETTE,
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      legend: { top: 0 },
      grid: { left: 120, right: 24, top: 32, bottom: 24 },
      xAxis: { type: 'value', axisLabel: { formatter: (v: number) => `¥${v}` } },
      yAxis: { type: 'category', data: top.map((g) => (g.label.length > 16 ? `${g.label.slice(0, 15)}…` : g.label)) },
      series: [{ name: t('llm.usage.cost'), type: 'bar', data: top.map((g) => yuan(g.cost)), tooltip: { valueFormatter: (v) => formatMoney(Math.round(Number(v) * MONEY_UNITS_PER_YUAN)) } }],
    };
  };
  return (
    <div className={styles.charts}>
      <Card size="small" title={<h2 style={{ margin: 0, fontSize: 15 }}>{t('llm.usage.tokensByDay')}</h2>}>
        <EChart option={tokens} label={t('llm.usage.chartLabel', { name: t('llm.usage.tokensByDay') })} testId="usage-chart-tokens" />
      </Card>
      <Card size="small" title={<h2 style={{ margin: 0, fontSize: 15 }}>{t('llm.usage.requestsCostByDay')}</h2>}>
        <EChart option={requestsCost} label={t('llm.usage.chartLabel', { name: t('llm.usage.requestsCostByDay') })} testId="usage-chart-requests" />
      </Card>
      <Card size="small" title={<h2 style={{ margin: 0, fontSize: 15 }}>{t('llm.usage.costByModel')}</h2>}>
        <EChart option={breakdown(byModel)} label={t('llm.usage.chartLabel', { name: t('llm.usage.costByModel') })} testId="usage-chart-models" />
      </Card>
      <Card size="small" title={<h2 style={{ margin: 0, fontSize: 15 }}>{t('llm.usage.costByKey')}</h2>}>
        <EChart option={breakdown(byKey)} label={t('llm.usage.chartLabel', { name: t('llm.usage.costByKey') })} testId="usage-chart-keys" />
      </Card>
    </div>
  );
}
