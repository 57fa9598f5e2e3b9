export function showTip(e: MouseEvent, text: string): void {
  const t = document.getElementById('tooltip')!;
  t.textContent = text;
  t.hidden = false;
  t.style.left = Math.min(e.clientX + 12, window.innerWidth - 300) + 'px';
  t.style.top = e.clientY + 14 + 'px';
}

export function hideTip(): void {
  document.getElementById('tooltip')!.hidden = true;
}
