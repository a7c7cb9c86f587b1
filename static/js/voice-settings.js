// @ts-check
// Voice settings (voice.js's gear, while in a call): the microphone and the speakers to use
// (enumerateDevices; choosing the output needs HTMLMediaElement.setSinkId, and the browser says
// whether it has it), the input volume, push-to-talk with a key the user picks, and the volume
// of each person in the call. Everything is kept in this browser and applies at once.
import { el, iconButton } from './ui.js';
import { state } from './store.js';
import { call, settings, changeSettings, canChooseOutput, keyName, volumeOf, setVolume, userName, voiceIn } from './voice.js';

/** Opens the dialog (made anew each time: the devices and the people change). */
export async function openVoiceSettings() {
  document.getElementById('voice-settings')?.remove();
  const devices = await navigator.mediaDevices.enumerateDevices().catch(() => /** @type {MediaDeviceInfo[]} */ ([]));
  /** @param {'audioinput' | 'audiooutput'} kind @param {string} chosen */
  const deviceSelect = (kind, chosen) => {
    const options = devices.filter((d) => d.kind === kind && d.deviceId !== 'default' && d.deviceId !== '');
    return el(
      'select',
      { id: `voice-${kind}`, 'data-voice-setting': kind },
      el('option', { value: '', text: 'The default device', selected: chosen === '' }),
      options.map((d, i) =>
        el('option', { value: d.deviceId, text: d.label || `${kind === 'audioinput' ? 'Microphone' : 'Speakers'} ${i + 1}`, selected: d.deviceId === chosen }),
      ),
    );
  };
  const input = deviceSelect('audioinput', settings.inputId);
  input.addEventListener('change', () => void changeSettings({ inputId: input.value }));
  const output = deviceSelect('audiooutput', settings.outputId);
  output.disabled = !canChooseOutput();
  output.addEventListener('change', () => void changeSettings({ outputId: output.value }));

  const volumeLabel = el('span', { text: `${Math.round(settings.inputVolume * 100)} %` });
  const inputVolume = el('input', {
    id: 'voice-input-volume',
    type: 'range',
    min: '0',
    max: '200',
    step: '5',
    value: String(Math.round(settings.inputVolume * 100)),
  });
  inputVolume.addEventListener('input', () => {
    volumeLabel.textContent = `${inputVolume.value} %`;
    void changeSettings({ inputVolume: Number(inputVolume.value) / 100 });
  });

  const ptt = el('input', { id: 'voice-ptt', type: 'checkbox', checked: settings.pushToTalk });
  ptt.addEventListener('change', () => void changeSettings({ pushToTalk: ptt.checked }));
  const keyButton = el('button', { type: 'button', id: 'voice-ptt-key', text: keyName(settings.pushToTalkKey) });
  keyButton.addEventListener('click', () => {
    keyButton.textContent = 'Press a key…';
    /** @param {KeyboardEvent} e */
    const pick = (e) => {
      e.preventDefault();
      e.stopPropagation();
      // Escape cancels (it would close the dialog otherwise); Tab is for moving around.
      if (e.code !== 'Escape' && e.code !== 'Tab' && e.code) void changeSettings({ pushToTalkKey: e.code });
      keyButton.textContent = keyName(e.code === 'Escape' || e.code === 'Tab' || !e.code ? settings.pushToTalkKey : e.code);
    };
    keyButton.addEventListener('keydown', pick, { once: true, capture: true });
  });

  const others = call.channelId ? voiceIn(call.channelId).filter((s) => s.user_id !== state.me?.user_id) : [];
  const people = others.map((s) => {
    const slider = el('input', {
      type: 'range',
      min: '0',
      max: '100',
      step: '5',
      value: String(Math.round(volumeOf(s.user_id) * 100)),
      'data-volume-user': s.user_id,
      'aria-label': `Volume of ${userName(s.user_id)}`,
    });
    slider.addEventListener('input', () => setVolume(s.user_id, Number(slider.value) / 100));
    return el('li', { class: 'voice-person' }, el('span', { class: 'nav-label', text: userName(s.user_id) }), slider);
  });

  const dialog = el(
    'dialog',
    { id: 'voice-settings', class: 'show-dialog', 'aria-labelledby': 'voice-settings-title' },
    el(
      'div',
      { class: 'show-head' },
      el('h2', { id: 'voice-settings-title', text: 'Voice settings' }),
      iconButton('x', 'Close', () => dialog.close()),
    ),
    el(
      'div',
      { class: 'show-body voice-settings' },
      el('div', { class: 'form-field' }, el('label', { for: input.id, text: 'Microphone' }), input),
      el(
        'div',
        { class: 'form-field' },
        el('label', { for: output.id, text: 'Speakers' }),
        output,
        canChooseOutput() ? null : el('span', { class: 'field-hint', text: 'This browser plays voice on its default device only.' }),
      ),
      el('div', { class: 'form-field' }, el('label', { for: inputVolume.id }, 'Input volume ', volumeLabel), inputVolume),
      el('div', { class: 'form-field check-line' }, ptt, el('label', { for: ptt.id, text: 'Push to talk' })),
      el(
        'div',
        { class: 'form-field' },
        el('span', { text: 'Push-to-talk key ' }),
        keyButton,
        el('span', { class: 'field-hint', text: 'Held, it sends your voice, anywhere on this page (in a text field it also types).' }),
      ),
      el('h3', { class: 'menu-heading', text: 'People in the call' }),
      people.length ? el('ul', { class: 'voice-people' }, people) : el('p', { class: 'muted', text: 'Nobody else is here yet.' }),
    ),
  );
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
