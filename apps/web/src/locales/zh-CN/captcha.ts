export default {
  modalTitle: '安全验证',
  /** SPEC §9 titles. */
  clickTitle: '请在下图依次点击',
  slideTitle: '请拖动滑块完成拼图',
  dragTitle: '请拖动拼图块完成拼图',
  rotateTitle: '请拖动滑块将图片旋转至正确角度',
  /** SPEC §9 default button text. */
  buttonText: '点击按钮进行验证',
  verified: '验证成功',
  success: '验证成功',
  checking: '验证中…',
  failed: '验证失败，请重试',
  loadFailed: '验证码加载失败，请重试',
  reload: '重新加载',
  refresh: '换一张',
  imageAlt: '验证码图片',
  pieceAlt: '拼图块',
  rotateAlt: '待旋转的图片',
  wordsAlt: '需依次点击：{words}',
  sliderLabel: '拖动滑块',
  clickUndo: '点击序号可撤销',
  clickMarker: '第 {n} 次点击，点击撤销',
} as const;
