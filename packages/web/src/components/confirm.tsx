// A confirmation dialog (a real <dialog>, modal, so focus stays in it): used before approving an
// APPROVE-level call and before a halt.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export interface ConfirmProps {
  title: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  children?: ComponentChildren;
}

export function Confirm({ title, confirmLabel, onConfirm, onCancel, children }: ConfirmProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog ref={ref} class="confirm" aria-label={title} onCancel={onCancel}>
      <h2>{title}</h2>
      {children}
      <div class="row">
        <button type="button" class="danger" onClick={onConfirm}>
          {confirmLabel}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
